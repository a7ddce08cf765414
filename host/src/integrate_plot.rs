//! `warpmc integrate --plot FILE.svg|png`: a finished run in two panels.
//!
//! * **Iterations**: each iteration's estimate with its 95% error bar (warm-up iterations in
//!   grey), the combined estimate as a line with its band, and the exact value dashed. Bars that
//!   shrink and settle around the exact value show the grid adapting; an iteration far outside
//!   the others shows why `χ²/dof` is large.
//! * **Grid**: the adapted grid of two chosen axes over the unit square: each axis's increment
//!   edges as lines. Lines crowd where the integrand's weight is (a peak draws a dense band).
//!
//! Like [`crate::plot`], it only draws numbers it is given.

use std::io;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::integrate::IntegrationResult;
use crate::plot::{FONT, check_path, register_font};
use crate::{Error, Result};

const WIDTH: u32 = 1600;
const HEIGHT: u32 = 760;

/// Check the path and the axes before the run: `axes` are below `dim`.
pub fn check(path: &Path, axes: (usize, usize), dim: u32) -> Result<()> {
    check_path(path)?;
    if axes.0 >= dim as usize || axes.1 >= dim as usize || axes.0 == axes.1 {
        return Err(Error::invalid(
            "plot_axes",
            format!("{},{}", axes.0, axes.1),
            format!("two different axes below dim = {dim}"),
        ));
    }
    Ok(())
}

/// Draw `r` into `path` (`.svg` or `.png`), the grid of `axes`.
pub fn draw(path: &Path, title: &str, r: &IntegrationResult, exact: f64, axes: (usize, usize)) -> Result<()> {
    let ext = check_path(path)?;
    let write_error =
        |m: String| Error::Io { what: format!("cannot write plot {}", path.display()), source: io::Error::other(m) };
    register_font().map_err(|e| write_error(e.to_string()))?;
    std::fs::File::create(path).map_err(|source| Error::io(format!("cannot write plot {}", path.display()), source))?;
    let drawn = if ext == "svg" {
        render(SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area(), title, r, exact, axes)
            .map_err(|e| e.to_string())
    } else {
        render(BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area(), title, r, exact, axes)
            .map_err(|e| e.to_string())
    };
    drawn.map_err(write_error)
}

type DrawResult<DB> = std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    r: &IntegrationResult,
    exact: f64,
    axes: (usize, usize),
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let body = root.titled(title, (FONT, 26))?;
    let (left, right) = body.split_horizontally(WIDTH - HEIGHT + 40);
    iterations_panel(&left, r, exact)?;
    grid_panel(&right, r, axes)?;
    root.present()
}

fn iterations_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &IntegrationResult,
    exact: f64,
) -> DrawResult<DB> {
    let its = &r.iterations;
    let finite = |v: f64| v.is_finite();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for it in its.iter().filter(|it| it.kept && finite(it.estimate) && finite(it.std_error)) {
        lo = lo.min(it.estimate - 1.96 * it.std_error);
        hi = hi.max(it.estimate + 1.96 * it.std_error);
    }
    for v in [exact, r.estimate - 1.96 * r.std_error, r.estimate + 1.96 * r.std_error] {
        if finite(v) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !(lo < hi) {
        let c = if finite(r.estimate) { r.estimate } else { 0.0 };
        let w = c.abs().max(1e-300) * 1e-6;
        (lo, hi) = (c - w, c + w);
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let n = its.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(20)
        .caption("estimate per iteration (95% bars; warm-up grey, its bar clipped)", (FONT, 20))
        .x_label_area_size(45)
        .y_label_area_size(110)
        .build_cartesian_2d(0.5f64..n + 0.5, lo..hi)?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("estimate")
        .x_labels(its.len().clamp(2, 20))
        .x_label_formatter(&|x| format!("{}", x.round() as i64))
        .y_label_formatter(&|y| format!("{y:.6e}"))
        .label_style((FONT, 15))
        .draw()?;
    let clamp = |y: f64| y.clamp(lo, hi);
    // The combined estimate's band and line.
    if finite(r.estimate) && finite(r.std_error) {
        let band = [(0.5, clamp(r.estimate - 1.96 * r.std_error)), (n + 0.5, clamp(r.estimate + 1.96 * r.std_error))];
        chart.draw_series(std::iter::once(Rectangle::new(band, RGBColor(70, 110, 160).mix(0.18).filled())))?;
        chart
            .draw_series(LineSeries::new(
                [(0.5, r.estimate), (n + 0.5, r.estimate)],
                RGBColor(70, 110, 160).stroke_width(2),
            ))?
            .label(format!("combined {:.6e} ± {:.2e}", r.estimate, r.std_error))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RGBColor(70, 110, 160).stroke_width(2)));
    }
    if finite(exact) {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.5, exact), (n + 0.5, exact)],
                8,
                6,
                RGBColor(200, 60, 40).stroke_width(2),
            ))?
            .label(format!("exact {exact:.6e}"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RGBColor(200, 60, 40).stroke_width(2)));
    }
    for (i, it) in its.iter().enumerate() {
        if !finite(it.estimate) || !finite(it.std_error) {
            continue;
        }
        let x = i as f64 + 1.0;
        let colour = if it.kept { BLACK } else { RGBColor(150, 150, 150) };
        let (a, b) = (clamp(it.estimate - 1.96 * it.std_error), clamp(it.estimate + 1.96 * it.std_error));
        chart.draw_series(std::iter::once(PathElement::new([(x, a), (x, b)], colour.stroke_width(2))))?;
        chart.draw_series(std::iter::once(PathElement::new([(x - 0.15, a), (x + 0.15, a)], colour.stroke_width(2))))?;
        chart.draw_series(std::iter::once(PathElement::new([(x - 0.15, b), (x + 0.15, b)], colour.stroke_width(2))))?;
        chart.draw_series(std::iter::once(Circle::new((x, clamp(it.estimate)), 4, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 15))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    let note = format!(
        "chi2/dof {:.2} ({} dof), {} evals, {} strata per axis ({} hypercubes)",
        r.chi2_per_dof, r.dof, r.evals, r.strata, r.cubes
    );
    area.draw(&Text::new(note, (130, area.dim_in_pixel().1 as i32 - 18), (FONT, 15)))?;
    Ok(())
}

fn grid_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &IntegrationResult,
    axes: (usize, usize),
) -> DrawResult<DB> {
    let mut chart = ChartBuilder::on(area)
        .margin(20)
        .caption(format!("adapted grid: axes {} and {}", axes.0, axes.1), (FONT, 20))
        .x_label_area_size(45)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..1f64, 0f64..1f64)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(format!("x{}", axes.0))
        .y_desc(format!("x{}", axes.1))
        .label_style((FONT, 15))
        .draw()?;
    let line = RGBColor(70, 110, 160).mix(0.7);
    if let (Some(gx), Some(gy)) = (r.grid.get(axes.0), r.grid.get(axes.1)) {
        for &e in gx {
            chart.draw_series(std::iter::once(PathElement::new([(e, 0.0), (e, 1.0)], line)))?;
        }
        for &e in gy {
            chart.draw_series(std::iter::once(PathElement::new([(0.0, e), (1.0, e)], line)))?;
        }
    }
    Ok(())
}
