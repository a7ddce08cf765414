//! Pictures of finished pricing runs (`warpmc price ... --plot FILE.svg|png`).
//!
//! One image, two panels side by side:
//!
//! * **Convergence**: each estimator's price against the number of paths on a log2 axis, with
//!   its 95% band (price ± 1.96 standard errors) shaded in the series' colour and the reference
//!   price, when there is one, as a dashed line. A table gives the final error bar; the chart
//!   shows how it got there: bands that narrow as 1/sqrt(n) around the reference, and which
//!   estimator narrows fastest for the same paths (antithetic, control variate, QMC).
//! * **Payoffs**: a histogram of discounted per-path payoffs from a sample of paths. The
//!   standard error is this distribution's spread over sqrt(n); the picture shows where the
//!   spread comes from, typically a point mass at zero (paths that expire worthless) and a long
//!   right tail, which is why plain Monte Carlo needs so many paths.
//!
//! This module only draws numbers it is given; it never runs a simulation.
//!
//! Text is drawn by plotters' `ab_glyph` backend from a font embedded in the binary
//! (`host/data/fonts/DejaVuSans.ttf`), so building needs no system font libraries and a PNG
//! looks the same on every machine. In an SVG the text stays text, set in the viewer's
//! sans-serif; the embedded font only measures it for the layout.

use std::io;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{Error, Result};

/// One estimate of a price from the first `paths` samples.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub paths: u64,
    pub price: f64,
    pub std_error: f64,
}

/// One estimator's estimates at increasing path counts.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Series {
    pub label: String,
    pub points: Vec<Estimate>,
}

/// What one `--plot` image shows.
pub struct PricePlot<'a> {
    pub title: String,
    pub series: Vec<Series>,
    /// A reference price and its name ("Black-Scholes"), drawn as a horizontal line.
    pub reference: Option<(f64, String)>,
    /// Discounted payoffs of a sample of paths, for the histogram.
    pub payoffs: &'a [f64],
    pub payoff_caption: String,
}

/// The two-sided 95% quantile of the standard normal: bands are price ± Z95 × std_error.
const Z95: f64 = 1.959963984540054;

/// Image size in pixels (the SVG's user units): wide enough for two panels side by side
/// with legible tick labels.
const WIDTH: u32 = 1600;
const HEIGHT: u32 = 700;
/// The convergence panel gets the larger share: it carries the legend and several series.
const LEFT_WIDTH: u32 = 880;

/// Histogram bins between the smallest payoff and [`TAIL_QUANTILE`].
const BINS: usize = 60;
/// Payoff tails are long (a call's payoff is unbounded); binning up to the maximum would squeeze
/// the body of the distribution into a few bins, so the range stops at this quantile and the
/// rest is counted in the last bin.
const TAIL_QUANTILE: f64 = 0.995;
/// A bin more than this many times taller than every other (the mass at zero) is cut at the
/// top, or the rest of the histogram would be a flat line along the axis.
const SPIKE_RATIO: u64 = 3;

/// Values larger in magnitude than this are drawn as if they were infinite, that is not at all:
/// plotters' tick placement loops forever on a range whose width overflows, and no price or
/// payoff is anywhere near.
const LARGEST_DRAWN: f64 = 1e200;
/// The narrowest range, relative to its magnitude, that an axis gets: below about 1e-15 the
/// ticks cannot be told apart in f64 and plotters' tick placement never ends.
const NARROWEST: f64 = 1e-9;

/// The family name the embedded font is registered under, and the one every style asks for.
pub(crate) const FONT: &str = "sans-serif";
/// DejaVu Sans from Debian's fonts-dejavu-core; see host/data/fonts/README.md.
static FONT_BYTES: &[u8] = include_bytes!("../data/fonts/DejaVuSans.ttf");

/// Colour-blind-friendly categorical colours (the Tableau 10 palette), cycled per series.
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
const BAR_COLOUR: RGBColor = RGBColor(70, 110, 160);
const NOTE_COLOUR: RGBColor = RGBColor(60, 60, 60);

/// The format `path` asks for, `"svg"` or `"png"` (its extension, case-insensitive), or the
/// error [`draw`] would give: callers check before computing what to draw.
pub fn check_path(path: &Path) -> Result<&'static str> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => Ok("svg"),
        Some("png") => Ok("png"),
        _ => Err(Error::invalid("plot", path.display(), "a file name ending in .svg or .png")),
    }
}

/// Draw `plot` into `path`; the format follows the extension (`.svg` or `.png`, case-insensitive).
pub fn draw(path: &Path, plot: &PricePlot) -> Result<()> {
    let extension = check_path(path)?;
    let write_error = |message: String| Error::Io {
        what: format!("cannot write plot {}", path.display()),
        source: io::Error::other(message),
    };
    register_font().map_err(|e| write_error(e.to_string()))?;
    // Check the directory before drawing: both backends only touch the file when presenting,
    // and their errors from there lose the io::ErrorKind.
    std::fs::File::create(path).map_err(|source| Error::io(format!("cannot write plot {}", path.display()), source))?;
    let drawn = if extension == "svg" {
        render(SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area(), plot).map_err(|e| e.to_string())
    } else {
        render(BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area(), plot).map_err(|e| e.to_string())
    };
    drawn.map_err(write_error)
}

/// Registers the embedded font with plotters once per process. Every text needs it, even in
/// an SVG: plotters measures labels with the font to lay out the chart.
pub(crate) fn register_font() -> std::result::Result<(), &'static str> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok());
    if ok { Ok(()) } else { Err("the embedded font host/data/fonts/DejaVuSans.ttf could not be read") }
}

type DrawResult<DB> = std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn render<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, plot: &PricePlot) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let body = root.titled(&plot.title, (FONT, 28))?;
    let (left, right) = body.split_horizontally(LEFT_WIDTH);
    convergence_panel(&left, plot)?;
    histogram_panel(&right, plot)?;
    root.present()
}

/// A series' drawable points as (log2 paths, price, std_error), in increasing paths.
struct Line {
    label: String,
    colour: RGBColor,
    points: Vec<(f64, f64, f64)>,
}

/// Keeps the points a chart can show: finite price and standard error (at most
/// [`LARGEST_DRAWN`] in magnitude), a standard error that is not negative, and at least one path
/// (log2 of zero is not on the axis). The legend says how many were left out, so a missing point
/// is never silent.
fn drawable_lines(series: &[Series]) -> Vec<Line> {
    series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut points: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .filter(|e| e.paths > 0 && drawable(e.price) && drawable(e.std_error) && e.std_error >= 0.0)
                .map(|e| ((e.paths as f64).log2(), e.price, e.std_error))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let left_out = s.points.len() - points.len();
            let label = match left_out {
                0 => s.label.clone(),
                1 => format!("{} (1 point not finite, not drawn)", s.label),
                n => format!("{} ({n} points not finite, not drawn)", s.label),
            };
            Line { label, colour: PALETTE[i % PALETTE.len()], points }
        })
        .collect()
}

fn convergence_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, plot: &PricePlot) -> DrawResult<DB> {
    let lines = drawable_lines(&plot.series);
    let reference = plot.reference.as_ref().filter(|(price, _)| drawable(*price));

    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, price, se) in lines.iter().flat_map(|l| &l.points) {
        x_lo = x_lo.min(x);
        x_hi = x_hi.max(x);
        y_lo = y_lo.min(price - Z95 * se);
        y_hi = y_hi.max(price + Z95 * se);
    }
    if let Some(&(price, _)) = reference {
        y_lo = y_lo.min(price);
        y_hi = y_hi.max(price);
    }
    if !(x_lo <= x_hi) {
        // Nothing to draw: show the usual range of path counts rather than an empty axis.
        (x_lo, x_hi) = (10.0, 24.0);
    }
    if !(y_lo <= y_hi) {
        (y_lo, y_hi) = (0.0, 1.0);
    }
    let x_range = (x_lo - 0.4)..(x_hi + 0.4);
    let y_range = padded(y_lo, y_hi);
    // Tick steps of at least one doubling keep every tick at a power of two.
    let x_ticks = ((x_range.end - x_range.start).floor() as usize + 1).clamp(2, 16);
    let y_ticks = 10;
    let y_format = tick_format(y_range.clone(), y_ticks);

    let mut chart = ChartBuilder::on(area)
        .caption("estimates and 95% bands (± 1.96 standard errors)", (FONT, 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range.clone(), y_range.clone())?;
    chart
        .configure_mesh()
        .x_desc("paths")
        .y_desc("price")
        .x_labels(x_ticks)
        .y_labels(y_ticks)
        .x_label_formatter(&|x: &f64| power_of_two(*x))
        .y_label_formatter(&y_format)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(215, 215, 215))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 18))
        .draw()?;

    // Bands first, then lines and markers on top, so no band hides another series' line.
    for line in &lines {
        if line.points.len() >= 2 {
            let upper = line.points.iter().map(|&(x, p, se)| (x, p + Z95 * se));
            let lower = line.points.iter().rev().map(|&(x, p, se)| (x, p - Z95 * se));
            let outline: Vec<(f64, f64)> = upper.chain(lower).map(|(x, y)| (x, clamp_to(y, &y_range))).collect();
            chart.draw_series(std::iter::once(Polygon::new(outline, line.colour.mix(0.15).filled())))?;
        }
    }
    for line in &lines {
        let colour = line.colour;
        let style = colour.stroke_width(2);
        let points: Vec<(f64, f64)> = line.points.iter().map(|&(x, p, _)| (x, p)).collect();
        // A band needs two points; a lone estimate gets an error bar instead, so it still shows
        // its 95% interval.
        if line.points.len() == 1 {
            let (x, p, se) = line.points[0];
            let (lo, hi) = (clamp_to(p - Z95 * se, &y_range), clamp_to(p + Z95 * se, &y_range));
            let cap = 0.12;
            chart.draw_series([
                PathElement::new(vec![(x, lo), (x, hi)], style),
                PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
                PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
            ])?;
        }
        chart.draw_series(LineSeries::new(points.iter().copied(), style))?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + Rectangle::new([(-12, -6), (12, 6)], colour.mix(0.15).filled())
                    + PathElement::new(vec![(-12, 0), (12, 0)], colour.stroke_width(2))
                    + Circle::new((0, 0), 4, colour.filled())
            });
    }
    if let Some((price, name)) = reference {
        let style = ShapeStyle { color: BLACK.to_rgba(), filled: false, stroke_width: 2 };
        chart
            .draw_series(DashedLineSeries::new([(x_range.start, *price), (x_range.end, *price)], 10, 6, style))?
            .label(format!("{name} {}", significant(*price, 6)))
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(-12, 0), (-3, 0)], style)
                    + PathElement::new(vec![(3, 0), (12, 0)], style)
            });
    }
    if !lines.is_empty() || reference.is_some() {
        chart
            .configure_series_labels()
            .position(legend_corner(&lines, reference.map(|r| r.0), &x_range, &y_range))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font((FONT, 15))
            .draw()?;
    }
    if lines.iter().all(|l| l.points.is_empty()) {
        note(area, "no finite estimates")?;
    }
    Ok(())
}

/// The right-hand corner, upper or lower, with more free room above or below what is drawn in
/// the right 40% of the chart, where the legend goes. Estimates usually settle on the reference
/// there, leaving both corners free; a biased or slowly converging series can fill one of them.
fn legend_corner(
    lines: &[Line],
    reference: Option<f64>,
    x_range: &std::ops::Range<f64>,
    y_range: &std::ops::Range<f64>,
) -> SeriesLabelPosition {
    let right = x_range.end - 0.4 * (x_range.end - x_range.start);
    let (mut top, mut bottom) = (reference.unwrap_or(f64::NEG_INFINITY), reference.unwrap_or(f64::INFINITY));
    for &(_, price, se) in lines.iter().flat_map(|l| &l.points).filter(|p| p.0 >= right) {
        top = top.max(price + Z95 * se);
        bottom = bottom.min(price - Z95 * se);
    }
    if y_range.end - top >= bottom - y_range.start {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::LowerRight
    }
}

/// The bins of a payoff sample and what the chart needs to say about them.
struct Bins {
    lo: f64,
    width: f64,
    counts: Vec<u64>,
    /// Finite payoffs above the last bin's upper edge, counted in the last bin.
    overflow: u64,
    /// NaN, infinite or larger than [`LARGEST_DRAWN`] in magnitude; not counted anywhere.
    not_finite: usize,
    total: u64,
}

impl Bins {
    /// The last bin's upper edge.
    fn hi(&self) -> f64 {
        self.lo + self.width * self.counts.len() as f64
    }
}

fn bin_payoffs(payoffs: &[f64]) -> Option<Bins> {
    let mut sorted: Vec<f64> = payoffs.iter().copied().filter(|&v| drawable(v)).collect();
    let not_finite = payoffs.len() - sorted.len();
    sorted.sort_by(f64::total_cmp);
    let (&lo, &max) = (sorted.first()?, sorted.last()?);
    let quantile_index = ((sorted.len() - 1) as f64 * TAIL_QUANTILE).round() as usize;
    let mut hi = sorted[quantile_index.min(sorted.len() - 1)];
    // When nearly every path pays the same (say zero), the quantile is the minimum; the tail then
    // is the whole picture, so bin up to the maximum.
    if !wide_enough(lo, hi) {
        hi = max;
    }
    if !wide_enough(lo, hi) {
        // All payoffs (nearly) equal: one bar in the middle of empty ones, so it reads as a bar
        // at that value rather than as a filled panel.
        let width = (lo.abs() * 0.02).max(0.2);
        let mut counts = vec![0; 9];
        counts[4] = sorted.len() as u64;
        return Some(Bins { lo: lo - 4.5 * width, width, counts, overflow: 0, not_finite, total: sorted.len() as u64 });
    }
    let width = (hi - lo) / BINS as f64;
    let mut counts = vec![0u64; BINS];
    let mut overflow = 0;
    for &v in &sorted {
        if v > hi {
            overflow += 1;
        }
        // Rounding can put v == hi at index BINS; it belongs to the last bin, as does the tail.
        let i = (((v - lo) / width) as usize).min(BINS - 1);
        counts[i] += 1;
    }
    Some(Bins { lo, width, counts, overflow, not_finite, total: sorted.len() as u64 })
}

fn histogram_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, plot: &PricePlot) -> DrawResult<DB> {
    let Some(bins) = bin_payoffs(plot.payoffs) else {
        let inner = area.margin(12, 12, 12, 12).titled(&plot.payoff_caption, (FONT, 20))?;
        inner.draw(&Rectangle::new([(0, 0), inner_corner(&inner)], RGBColor(180, 180, 180)))?;
        return note(&inner, if plot.payoffs.is_empty() { "no payoff sample" } else { "no finite payoffs" });
    };

    // The tallest bar is cut when it dwarfs the rest, so the shape of the rest stays readable.
    let (tallest_index, tallest) = bins.counts.iter().copied().enumerate().max_by_key(|&(_, c)| c).unwrap_or((0, 0));
    let second = bins.counts.iter().enumerate().filter(|&(i, _)| i != tallest_index).map(|(_, &c)| c).max();
    let (y_top, cut) = match second {
        Some(second) if second > 0 && tallest > SPIKE_RATIO * second => (second + second / 2 + 1, true),
        _ => (tallest + tallest / 10 + 1, false),
    };
    let x_hi = bins.hi();
    let x_range = bins.lo..x_hi;
    let x_ticks = 8;
    let x_format = tick_format(x_range.clone(), x_ticks);

    let mut chart = ChartBuilder::on(area)
        .caption(&plot.payoff_caption, (FONT, 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, 0u64..y_top)?;
    chart
        .configure_mesh()
        .x_desc("discounted payoff")
        .y_desc("paths")
        .x_labels(x_ticks)
        .y_labels(10)
        .x_label_formatter(&x_format)
        .y_label_formatter(&|c: &u64| thousands(*c))
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(215, 215, 215))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 18))
        .draw()?;
    chart.draw_series(bins.counts.iter().enumerate().filter(|&(_, &c)| c > 0).map(|(i, &c)| {
        let x0 = bins.lo + bins.width * i as f64;
        let mut bar = Rectangle::new([(x0, 0), (x0 + bins.width, c.min(y_top))], BAR_COLOUR.mix(0.85).filled());
        bar.set_margin(0, 0, 1, 0);
        bar
    }))?;

    let mut notes = Vec::new();
    if cut {
        let x0 = bins.lo + bins.width * tallest_index as f64;
        let share = 100.0 * tallest as f64 / bins.total as f64;
        // A zigzag across the cut bar marks that its top is missing.
        let (xa, xb) = (x0 - bins.width * 0.3, x0 + bins.width * 1.3);
        let y = y_top - y_top / 12;
        let dy = (y_top / 60).max(1);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(xa, y), (x0 + bins.width * 0.5, y + dy), (xb, y)],
            WHITE.stroke_width(4),
        )))?;
        let text = TextStyle::from((FONT, 15).into_font()).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Top));
        chart.draw_series(std::iter::once(
            EmptyElement::at((x0 + bins.width, y_top))
                + Text::new(format!("← {} paths ({share:.1}%), bar cut", thousands(tallest)), (6, 4), text),
        ))?;
        notes.push(format!(
            "the bar from {} to {} holds {} of {} paths",
            significant(x0, 4),
            significant(x0 + bins.width, 4),
            thousands(tallest),
            thousands(bins.total)
        ));
    }
    if bins.overflow > 0 {
        notes.push(format!(
            "{} above {} (the {}th percentile) counted in the last bin",
            count(bins.overflow, "path", "paths"),
            significant(x_hi, 4),
            TAIL_QUANTILE * 100.0
        ));
    }
    if bins.not_finite > 0 {
        notes.push(format!("{} not finite, left out", count(bins.not_finite as u64, "payoff", "payoffs")));
    }
    let text = TextStyle::from((FONT, 14).into_font()).color(&NOTE_COLOUR).pos(Pos::new(HPos::Right, VPos::Top));
    let corner = (x_hi, y_top);
    chart.draw_series(
        notes
            .into_iter()
            .enumerate()
            .map(|(i, n)| EmptyElement::at(corner) + Text::new(n, (-8, 28 + 20 * i as i32), text.clone())),
    )?;
    Ok(())
}

/// A centred grey message in an otherwise empty area.
fn note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str) -> DrawResult<DB> {
    let (w, h) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, 22).into_font()).color(&NOTE_COLOUR).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(text, &style, (w as i32 / 2, h as i32 / 2))
}

fn inner_corner<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> (i32, i32) {
    let (w, h) = area.dim_in_pixel();
    (w as i32 - 1, h as i32 - 1)
}

fn drawable(v: f64) -> bool {
    v.abs() <= LARGEST_DRAWN
}

/// Whether [lo, hi] is wide enough for an axis of its own (see [`NARROWEST`]).
fn wide_enough(lo: f64, hi: f64) -> bool {
    hi - lo > NARROWEST * lo.abs().max(hi.abs())
}

/// A range around [lo, hi] (both at most [`LARGEST_DRAWN`] in magnitude) with 6% room on each
/// side, and wide enough for ticks.
fn padded(lo: f64, hi: f64) -> std::ops::Range<f64> {
    if wide_enough(lo, hi) {
        let pad = (hi - lo) * 0.06;
        (lo - pad)..(hi + pad)
    } else {
        let mid = 0.5 * (lo + hi);
        let pad = (mid.abs() * 0.01).max(1e-3);
        (mid - pad)..(mid + pad)
    }
}

/// Keeps a band edge inside the plotted range: a huge standard error must not turn into a
/// pixel coordinate that overflows.
fn clamp_to(y: f64, range: &std::ops::Range<f64>) -> f64 {
    y.clamp(range.start, range.end)
}

/// Tick labels with as many decimals as the tick spacing needs ("10", "10.5", not "10.0" or
/// "10.50000001"). plotters spaces at most `ticks` ticks 1, 2 or 5 times a power of ten apart,
/// so the spacing is at least range / ticks and its last decimal is that of the power of ten.
fn tick_format(range: std::ops::Range<f64>, ticks: usize) -> impl Fn(&f64) -> String {
    let spacing = (range.end - range.start) / ticks.max(1) as f64;
    let spacing_digit = spacing.log10().floor();
    let decimals = (-spacing_digit).clamp(0.0, 15.0) as usize;
    let leading_digit = range.start.abs().max(range.end.abs()).log10().floor();
    // Labels longer than about ten digits do not fit the axis: those become 1.0450e7.
    let scientific = (leading_digit.max(0.0) + 1.0 + decimals as f64 > 10.0)
        .then(|| (leading_digit - spacing_digit).clamp(1.0, 15.0) as usize);
    move |v: &f64| {
        // A tick at zero computed as a difference of large values is not exactly zero.
        let v = if v.abs() < spacing * 1e-6 { 0.0 } else { *v };
        let text = match scientific {
            Some(mantissa_decimals) => format!("{v:.mantissa_decimals$e}"),
            None => format!("{v:.decimals$}"),
        };
        // Rounding a tick just below zero must not print "-0".
        if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
            text.trim_start_matches('-').to_string()
        } else {
            text
        }
    }
}

/// A log2 tick as a power of two ("2¹⁶"); a tick between powers shows its path count.
fn power_of_two(x: f64) -> String {
    const SUPERSCRIPTS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let k = x.round();
    if (x - k).abs() < 1e-9 && (0.0..=63.0).contains(&k) {
        let digits: String = (k as u32).to_string().chars().map(|d| SUPERSCRIPTS[(d as u8 - b'0') as usize]).collect();
        format!("2{digits}")
    } else if x.is_finite() && x < 64.0 {
        thousands(x.exp2().round() as u64)
    } else {
        String::new()
    }
}

/// `65536` as `65,536`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `1 path`, `65,536 paths`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `x` to `digits` significant digits in fixed notation without trailing zeros (`10.4506`, `3`),
/// as a price is read.
fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory under the system's temporary directory, removed when dropped unless
    /// `WARPMC_KEEP_PLOTS` is set (to look at the pictures).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let dir = std::env::temp_dir().join(format!("warpmc-plot-{name}-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            if std::env::var_os("WARPMC_KEEP_PLOTS").is_some() {
                eprintln!("plots kept in {}", self.0.display());
            } else {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    /// Estimates at 2^10 .. 2^last with a standard error of `sd / sqrt(n)` and a deterministic
    /// wobble of about one standard error around `price`.
    fn synthetic(label: &str, price: f64, sd: f64, first: u32, last: u32) -> Series {
        let points = (first..=last)
            .map(|k| {
                let paths = 1u64 << k;
                let std_error = sd / (paths as f64).sqrt();
                let wobble = ((k as f64) * 2.3).sin();
                Estimate { paths, price: price + wobble * std_error, std_error }
            })
            .collect();
        Series { label: label.into(), points }
    }

    /// Call-like payoffs: 40% exactly zero, the rest a skewed positive tail (deterministic).
    fn payoffs(n: usize) -> Vec<f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                if u < 0.4 { 0.0 } else { -12.0 * (1.0 - (u - 0.4) / 0.6).max(1e-12).ln() }
            })
            .collect()
    }

    fn sample_plot(payoffs: &[f64]) -> PricePlot<'_> {
        PricePlot {
            title: "European call S=100 K=100 r=5% σ=20% T=1".into(),
            series: vec![
                synthetic("plain", 10.4506, 14.7, 10, 24),
                synthetic("antithetic", 10.4506, 7.0, 10, 22),
                Series {
                    label: "QMC (Sobol, 16 replicates)".into(),
                    points: vec![Estimate { paths: 1 << 16, price: 10.4503, std_error: 0.0021 }],
                },
            ],
            reference: Some((10.450583572185565, "Black-Scholes".into())),
            payoffs,
            payoff_caption: "payoffs of the first 65,536 paths".into(),
        }
    }

    fn png_size(bytes: &[u8]) -> (u32, u32) {
        assert!(bytes.len() > 24 && &bytes[12..16] == b"IHDR", "no IHDR chunk first");
        let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        (be(16), be(20))
    }

    #[test]
    fn draws_svg_and_png() {
        let dir = TempDir::new("both");
        let payoffs = payoffs(65_536);
        let plot = sample_plot(&payoffs);

        let svg_path = dir.0.join("convergence.svg");
        draw(&svg_path, &plot).unwrap();
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        for text in ["plain", "antithetic", "QMC (Sobol, 16 replicates)", "European call", "Black-Scholes 10.4506"] {
            assert!(svg.contains(text), "the SVG lacks {text:?}");
        }
        assert!(svg.contains("payoffs of the first 65,536 paths"));
        assert!(svg.contains("bar cut"), "the spike at zero was not cut");

        // Upper case: the extension is matched without regard to case.
        let png_path = dir.0.join("convergence.PNG");
        draw(&png_path, &plot).unwrap();
        let png = std::fs::read(&png_path).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(png_size(&png), (WIDTH, HEIGHT));
    }

    #[test]
    fn other_extensions_are_invalid() {
        let dir = TempDir::new("ext");
        let payoffs = payoffs(100);
        for name in ["plot.jpg", "plot", "plot.svg.txt"] {
            let path = dir.0.join(name);
            match draw(&path, &sample_plot(&payoffs)) {
                Err(Error::InvalidParameter { field, value, allowed }) => {
                    assert_eq!(field, "plot");
                    assert_eq!(value, path.display().to_string());
                    assert!(allowed.contains(".svg") && allowed.contains(".png"));
                }
                other => panic!("{name}: expected InvalidParameter, got {other:?}"),
            }
            assert!(!path.exists(), "{name} was written");
        }
    }

    #[test]
    fn unwritable_path_is_an_io_error() {
        let dir = TempDir::new("io");
        let path = dir.0.join("missing-directory").join("plot.png");
        match draw(&path, &sample_plot(&[])) {
            Err(Error::Io { what, .. }) => assert!(what.starts_with("cannot write plot"), "{what}"),
            other => panic!("expected Io, got {other:?}"),
        }
    }

    #[test]
    fn non_finite_estimates_and_empty_payoffs_draw() {
        let dir = TempDir::new("degenerate");
        let mut plot = sample_plot(&[]);
        plot.series[0].points[3].price = f64::NAN;
        plot.series[0].points[4].std_error = f64::INFINITY;
        plot.series[1].points[0].price = f64::NEG_INFINITY;
        plot.series[1].points[1].paths = 0;
        plot.series.push(Series {
            label: "all broken".into(),
            points: vec![Estimate { paths: 1 << 12, price: f64::NAN, std_error: f64::NAN }],
        });
        plot.series.push(Series { label: "no points".into(), points: vec![] });
        plot.reference = Some((f64::NAN, "nothing".into()));
        for ext in ["svg", "png"] {
            draw(&dir.0.join(format!("degenerate.{ext}")), &plot).unwrap();
        }
        let svg = std::fs::read_to_string(dir.0.join("degenerate.svg")).unwrap();
        assert!(svg.contains("no payoff sample"));
        assert!(svg.contains("plain (2 points not finite, not drawn)"));

        // Nothing drawable at all, and payoffs that are all equal or not finite.
        let equal = [0.0; 10];
        let plot = PricePlot {
            title: String::new(),
            series: vec![Series {
                label: "x".into(),
                points: vec![Estimate { paths: 1 << 10, price: f64::INFINITY, std_error: 1.0 }],
            }],
            reference: None,
            payoffs: &equal,
            payoff_caption: String::new(),
        };
        for ext in ["svg", "png"] {
            draw(&dir.0.join(format!("empty.{ext}")), &plot).unwrap();
        }
        // Magnitudes near and beyond what f64 ranges can hold, and ranges too narrow for f64
        // ticks: plotters' tick placement must neither loop forever nor assert.
        let e = |paths, price, std_error| Estimate { paths, price, std_error };
        let cases: [(&[f64], Vec<Estimate>); 4] = [
            (&[f64::NAN, f64::INFINITY], vec![e(1, 1e199, 1e199), e(u64::MAX, -1e199, 0.0)]),
            (&[1e199, -1e199, 0.0], vec![e(1 << 10, 1e300, 1.0), e(1 << 11, f64::MAX, f64::MAX)]),
            (&[1e250, 0.0, 1.0], vec![e(1 << 10, 1e15, 1e-9), e(1 << 12, 1e15 + 1e-6, 1e-9)]),
            (&[1e15, 1e15 + 0.125], vec![e(1 << 10, 3.0, 0.0), e(1 << 10, 3.0, 0.0)]),
        ];
        for (i, (payoffs, points)) in cases.into_iter().enumerate() {
            let plot = PricePlot {
                series: vec![Series { label: "odd".into(), points }],
                reference: Some((3.0, "three".into())),
                payoffs,
                ..sample_plot(&[])
            };
            for ext in ["svg", "png"] {
                draw(&dir.0.join(format!("odd{i}.{ext}")), &plot).unwrap();
            }
        }
    }

    #[test]
    fn bins_count_every_finite_payoff() {
        let payoffs = payoffs(10_000);
        let bins = bin_payoffs(&payoffs).unwrap();
        assert_eq!(bins.counts.len(), BINS);
        assert_eq!(bins.counts.iter().sum::<u64>(), 10_000);
        assert_eq!(bins.total, 10_000);
        // 0.5% of the sample lies above the 99.5th percentile.
        assert!((40..=60).contains(&bins.overflow), "{}", bins.overflow);
        assert!(bins.counts[0] >= 4_000);
        assert!(bin_payoffs(&[]).is_none());
        assert!(bin_payoffs(&[f64::NAN]).is_none());
        assert_eq!(bin_payoffs(&[2.0, 2.0]).unwrap().counts, vec![0, 0, 0, 0, 2, 0, 0, 0, 0]);
    }

    #[test]
    fn labels() {
        assert_eq!(thousands(65_536), "65,536");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(power_of_two(16.0), "2¹⁶");
        assert_eq!(power_of_two(10.0), "2¹⁰");
        assert_eq!(significant(10.450583572185565, 6), "10.4506");
        assert_eq!(significant(0.00123456, 3), "0.00123");
        assert_eq!(significant(3.0, 6), "3");
        assert_eq!(significant(10.45, 6), "10.45");
        assert_eq!(significant(1234567.0, 4), "1234567");
        assert_eq!(count(1, "path", "paths"), "1 path");
        assert_eq!(count(1234, "path", "paths"), "1,234 paths");
        let format = tick_format(0.0..57.0, 8);
        assert_eq!((format(&0.0), format(&10.0), format(&-1e-12)), ("0".into(), "10".into(), "0".into()));
        let format = tick_format(9.1..11.3, 10);
        assert_eq!((format(&10.5), format(&-0.25)), ("10.5".into(), "-0.2".into()));
        let format = tick_format(1.04e7..1.06e7, 10);
        assert_eq!(format(&1.045e7), "10450000");
        let format = tick_format(1e15..1e15 + 1e3, 10);
        assert_eq!(format(&(1e15 + 200.0)), "1.0000000000002e15");
    }
}
