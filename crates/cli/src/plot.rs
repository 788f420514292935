//! `triskele report --plot OUT.svg`: throughput against batch size, one line per protocol,
//! drawn with `plotters` (SVG backend, no system fonts needed: text stays SVG text).

use std::path::Path;

use plotters::prelude::*;

use crate::error::CliError;
use crate::report::Summary;

/// Width and height of the picture in pixels.
const SIZE: (u32, u32) = (960, 600);

/// A line colour per protocol, cycling through a palette that stays readable on white.
fn colour(k: usize) -> RGBColor {
    const PALETTE: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[k % PALETTE.len()]
}

/// The series to draw: per protocol (in order of first appearance), `(batch size, ops/s)`
/// sorted by batch size. Rows with no positive time are left out.
pub fn series(rows: &[Summary]) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows {
        let y = r.blocks_per_sec();
        if y <= 0.0 || r.simd == 0 {
            continue;
        }
        let point = (r.simd as f64, y);
        match out.iter_mut().find(|(p, _)| *p == r.protocol) {
            Some((_, pts)) => pts.push(point),
            None => out.push((r.protocol.clone(), vec![point])),
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// A logarithmic axis range covering `lo..hi` with some room, never empty.
fn log_range(lo: f64, hi: f64) -> core::ops::Range<f64> {
    (lo / 2.0)..(hi * 2.0)
}

fn plot_error(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::Input(format!("{}: cannot draw the plot: {e}", path.display()))
}

/// Writes an SVG with total throughput (operations per second: blocks, bits or field
/// elements, as in the table) against the batch size, both axes logarithmic.
pub fn write_svg(path: &Path, rows: &[Summary]) -> Result<(), CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => {}
        _ => {
            return Err(CliError::Input(format!(
                "{}: --plot writes SVG; give a file name ending in .svg",
                path.display()
            )))
        }
    }
    let data = series(rows);
    if data.is_empty() {
        return Err(CliError::Input(
            "nothing to plot: no repetition with a positive time".into(),
        ));
    }
    let all = data.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_error(path, e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "total throughput (max over parties, mean over repetitions)",
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(log_range(x0, x1).log_scale(), log_range(y0, y1).log_scale())
            .map_err(|e| plot_error(path, e))?;
        chart
            .configure_mesh()
            .x_desc("batch size (simd)")
            .y_desc("operations per second")
            .draw()
            .map_err(|e| plot_error(path, e))?;
        for (k, (name, pts)) in data.iter().enumerate() {
            let c = colour(k);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(|e| plot_error(path, e))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
                .map_err(|e| plot_error(path, e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| plot_error(path, e))?;
        root.present().map_err(|e| plot_error(path, e))?;
    }
    std::fs::write(path, svg).map_err(|source| CliError::File {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn summary(protocol: &str, simd: usize, total: f64) -> Summary {
        Summary {
            protocol: protocol.into(),
            simd,
            reps: 1,
            time: [0.0, total, 0.0],
            bytes: [0.0; 3],
            totals: vec![total],
        }
    }

    #[test]
    fn series_group_by_protocol_and_sort_by_batch_size() {
        let rows = [
            summary("chida", 100, 0.01),
            summary("lut16", 1, 0.001),
            summary("chida", 1, 0.002),
            summary("lut16", 7, 0.0),
        ];
        let s = series(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].0, "chida");
        assert_eq!(s[0].1, vec![(1.0, 500.0), (100.0, 10_000.0)]);
        // The zero-time row is left out.
        assert_eq!(s[1].1, vec![(1.0, 1000.0)]);
    }

    #[test]
    fn writes_an_svg_with_one_line_per_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.svg");
        let rows = [
            summary("chida", 1, 0.002),
            summary("chida", 1000, 0.02),
            summary("mal-chida-rec-check", 1, 0.004),
            summary("mal-chida-rec-check", 1000, 0.2),
        ];
        write_svg(&path, &rows).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("chida") && svg.contains("mal-chida-rec-check"));
        // Four markers, and each protocol's colour on its line and its legend entry.
        assert_eq!(svg.matches("<circle").count(), 4);
        for k in 0..2 {
            let RGBColor(r, g, b) = colour(k);
            let stroke = format!("stroke=\"#{r:02X}{g:02X}{b:02X}\"");
            assert!(svg.matches(&stroke).count() >= 2, "{stroke}");
        }
        assert_ne!(colour(0), colour(1));
    }

    #[test]
    fn one_batch_size_still_gives_a_plot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("one.svg");
        write_svg(&path, &[summary("lut256", 10, 0.5)]).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("lut256"));
    }

    #[test]
    fn other_formats_and_empty_data_are_input_errors() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("out.png");
        let e = write_svg(&png, &[summary("chida", 1, 0.1)]).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(e.to_string().contains(".svg"));
        let svg = dir.path().join("out.svg");
        let e = write_svg(&svg, &[summary("chida", 1, 0.0)]).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert!(!svg.exists());
    }
}
