//! CLI errors and their exit codes (ARCHITECTURE.md: 0 ok, 1 usage or input, 2 configuration,
//! certificate or network, 3 security abort).

use triskele_engine::EngineError;
use triskele_net::NetError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad usage or input (exit 1).
    #[error("{0}")]
    Input(String),
    /// Configuration, certificate or network failure (exit 2).
    #[error("{0}")]
    Net(#[from] NetError),
    /// Engine failure: mapped by kind.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// A file could not be read or written (exit 1).
    #[error("{path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Writing or reading CSV failed (exit 1).
    #[error("{path}: {source}")]
    Csv {
        path: String,
        #[source]
        source: csv::Error,
    },
    /// A party thread failed unexpectedly (exit 2).
    #[error("{0}")]
    Party(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) | CliError::File { .. } | CliError::Csv { .. } => 1,
            CliError::Net(_) | CliError::Party(_) => 2,
            CliError::Engine(e) => match e {
                EngineError::Abort(_) => 3,
                EngineError::LengthMismatch { .. } | EngineError::Unsupported(_) => 1,
                _ => 2,
            },
        }
    }
}
