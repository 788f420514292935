//! `triskele keygen`: certificates and config files for three machines.

use crate::args::KeygenArgs;
use crate::error::CliError;

/// Parses `HOST:PORT,HOST:PORT,HOST:PORT`.
pub fn parse_hosts(s: &str) -> Result<[(String, u16); 3], CliError> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(CliError::Input(format!(
            "--hosts needs three HOST:PORT entries separated by commas, got {}",
            parts.len()
        )));
    }
    let mut out: Vec<(String, u16)> = Vec::with_capacity(3);
    for (i, p) in parts.iter().enumerate() {
        let (host, port) = p
            .rsplit_once(':')
            .ok_or_else(|| CliError::Input(format!("host {} ('{p}') is not HOST:PORT", i + 1)))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(CliError::Input(format!(
                "host {} ('{p}') has an empty host",
                i + 1
            )));
        }
        let port: u16 = port.parse().map_err(|_| {
            CliError::Input(format!(
                "host {} ('{p}'): '{port}' is not a port number",
                i + 1
            ))
        })?;
        out.push((host.to_string(), port));
    }
    <[(String, u16); 3]>::try_from(out)
        .map_err(|_| CliError::Input("--hosts needs exactly three entries".into()))
}

pub fn run(a: KeygenArgs) -> Result<(), CliError> {
    let hosts = parse_hosts(&a.hosts)?;
    let files = triskele_net::keygen(&a.dir, &hosts)?;
    for f in files {
        println!("{}", f.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse() {
        let h = parse_hosts("a:1,b:2,[::1]:3").ok();
        assert_eq!(
            h,
            Some([
                ("a".to_string(), 1),
                ("b".to_string(), 2),
                ("::1".to_string(), 3)
            ])
        );
        assert!(parse_hosts("a:1,b:2").is_err());
        assert!(parse_hosts("a:1,b:x,c:3").is_err());
        assert!(parse_hosts("a,b:2,c:3").is_err());
        assert!(parse_hosts(":1,b:2,c:3").is_err());
    }
}
