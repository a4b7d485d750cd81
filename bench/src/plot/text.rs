//! Text drawn from DejaVu Sans (built into the binary) by wrt itself rather than by plotters'
//! backends, the same way in both formats: [`GlyphText`] wraps a backend and lays each text out
//! in the box plotters measured for it (so that plotters' layout still holds), then either
//! rasterises the glyphs into pixels (PNG; plotters' own rasteriser misplaces some glyphs, such
//! as the decimal point) or writes their outlines (SVG, so that the plot needs no font where it
//! is viewed). The SVG backend can only write `<text>` elements, so each one carries its
//! outlines as its text, behind a marker, and [`outline`] turns it into a `<path>` once the SVG
//! is written.

use ab_glyph::{Font, FontRef, OutlineCurve, Point, PxScale, ScaleFont};
use plotters::prelude::DrawingBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform};

/// What starts a `<text>` that holds outlines.
const MARK: &str = "wrt-outline:";

/// How [`GlyphText`] draws glyphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Into pixels, through `draw_pixel`.
    Pixels,
    /// As SVG outlines, through the SVG backend's `draw_text`.
    Outlines,
}

/// A drawing backend that draws text itself into the backend it wraps.
#[derive(Debug)]
pub(super) struct GlyphText<B> {
    inner: B,
    font: Option<FontRef<'static>>,
    mode: Mode,
}

impl<B> GlyphText<B> {
    fn new(inner: B, mode: Mode) -> Self {
        Self { inner, font: FontRef::try_from_slice(dejavu::sans::regular()).ok(), mode }
    }

    /// Text as pixels, for bitmaps.
    pub(super) fn pixels(inner: B) -> Self {
        Self::new(inner, Mode::Pixels)
    }

    /// Text as outlines, for plotters' SVG backend.
    pub(super) fn outlines(inner: B) -> Self {
        Self::new(inner, Mode::Outlines)
    }
}

/// Where a text's glyphs go: the box is `layout` wide, anchored at `pos` by `anchor`, the
/// baseline half the size below its top (as plotters lays text out), and the whole turned by
/// `transform` about `pos`.
struct Placement {
    dx: f64,
    baseline: f64,
    transform: FontTransform,
    pos: BackendCoord,
}

impl Placement {
    fn new(
        size: f64,
        layout: ((i32, i32), (i32, i32)),
        anchor: (HPos, VPos),
        transform: FontTransform,
        pos: BackendCoord,
    ) -> Self {
        let ((min_x, min_y), (max_x, max_y)) = layout;
        let (width, height) = (f64::from(max_x - min_x), f64::from(max_y - min_y));
        let dx = match anchor.0 {
            HPos::Left => 0.0,
            HPos::Right => -width,
            HPos::Center => -(width / 2.0).trunc(),
        };
        let dy = match anchor.1 {
            VPos::Top => 0.0,
            VPos::Center => -(height / 2.0).trunc(),
            VPos::Bottom => -height,
        };
        Self { dx, baseline: dy + size / 2.0, transform, pos }
    }

    /// The image coordinates of `(x, y)`, a point of the unturned text relative to `pos` (y down).
    fn turn(&self, x: f64, y: f64) -> (f64, f64) {
        let (x, y) = match self.transform {
            FontTransform::None => (x, y),
            FontTransform::Rotate90 => (-y, x),
            FontTransform::Rotate180 => (-x, -y),
            FontTransform::Rotate270 => (y, -x),
        };
        (f64::from(self.pos.0) + x, f64::from(self.pos.1) + y)
    }
}

/// Each glyph of `text` in `font` at `size` pixels (from descender to ascender, as plotters
/// scales fonts) with the x of its origin from the start of the text, kerned.
fn glyphs(font: &FontRef<'_>, text: &str, size: f64) -> Vec<(ab_glyph::GlyphId, f64)> {
    let scaled = font.as_scaled(size as f32);
    let mut out = Vec::new();
    let mut origin = 0.0;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = previous {
            origin += f64::from(scaled.kern(p, id));
        }
        previous = Some(id);
        out.push((id, origin));
        origin += f64::from(scaled.h_advance(id));
    }
    out
}

/// The SVG path of `text`.
fn text_path(font: &FontRef<'_>, text: &str, size: f64, at: &Placement) -> String {
    let factor = f64::from(font.as_scaled(size as f32).h_scale_factor());
    let mut d = String::new();
    for (id, origin) in glyphs(font, text, size) {
        let place = |p: Point| at.turn(at.dx + origin + f64::from(p.x) * factor, at.baseline - f64::from(p.y) * factor);
        let Some(outline) = font.outline(id) else { continue };
        let mut last: Option<Point> = None;
        for curve in &outline.curves {
            let (start, points, command) = match curve {
                OutlineCurve::Line(a, b) => (*a, vec![*b], 'L'),
                OutlineCurve::Quad(a, c, b) => (*a, vec![*c, *b], 'Q'),
                OutlineCurve::Cubic(a, c1, c2, b) => (*a, vec![*c1, *c2, *b], 'C'),
            };
            if last != Some(start) {
                let (x, y) = place(start);
                d.push_str(&format!("M{x:.2} {y:.2}"));
            }
            last = points.last().copied();
            d.push(command);
            let coords: Vec<String> = points
                .into_iter()
                .map(|p| {
                    let (x, y) = place(p);
                    format!("{x:.2} {y:.2}")
                })
                .collect();
            d.push_str(&coords.join(" "));
        }
    }
    d
}

/// The pixels of `text` with their coverage (0 to 1).
fn text_pixels(font: &FontRef<'_>, text: &str, size: f64, at: &Placement) -> Vec<(BackendCoord, f32)> {
    let mut out = Vec::new();
    for (id, origin) in glyphs(font, text, size) {
        let glyph = id.with_scale_and_position(
            PxScale::from(size as f32),
            ab_glyph::point((at.dx + origin) as f32, at.baseline as f32),
        );
        let Some(outlined) = font.outline_glyph(glyph) else { continue };
        let bounds = outlined.px_bounds();
        outlined.draw(|x, y, coverage| {
            let (px, py) = at.turn(f64::from(bounds.min.x) + f64::from(x), f64::from(bounds.min.y) + f64::from(y));
            out.push(((px.round() as i32, py.round() as i32), coverage));
        });
    }
    out
}

impl<B: DrawingBackend> DrawingBackend for GlyphText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let Some(font) = &self.font else {
            return self.inner.draw_text(text, style, pos);
        };
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let layout = style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let anchor = style.anchor();
        let at = Placement::new(style.size(), layout, (anchor.h_pos, anchor.v_pos), style.transform(), pos);
        match self.mode {
            Mode::Outlines => {
                let d = text_path(font, text, style.size(), &at);
                self.inner.draw_text(&format!("{MARK}{d}"), style, pos)
            }
            Mode::Pixels => {
                let (w, h) = self.inner.get_size();
                let inside = |(x, y): BackendCoord| x >= 0 && y >= 0 && x < w as i32 && y < h as i32;
                for (point, coverage) in text_pixels(font, text, style.size(), &at) {
                    if coverage > 0.0 && inside(point) {
                        let alpha = color.alpha * f64::from(coverage.min(1.0));
                        self.inner.draw_pixel(point, BackendColor { alpha, rgb: color.rgb })?;
                    }
                }
                Ok(())
            }
        }
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.inner.estimate_text_size(text, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}

/// The value of attribute `name` in the tag `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// `svg` with each `<text>` element written by [`GlyphText`] replaced by a `<path>` of its
/// outlines, in the same colour and opacity. Other elements are left as they are.
pub(super) fn outline(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(open) = rest.find("<text") {
        let Some(close) = rest[open..].find("</text>").map(|i| open + i) else {
            break;
        };
        let element = &rest[open..close];
        let Some((tag, content)) = element.split_once('>') else {
            break;
        };
        out.push_str(&rest[..open]);
        match content.trim().strip_prefix(MARK) {
            Some(d) => {
                let fill = attribute(tag, "fill").unwrap_or("#000000");
                let opacity = attribute(tag, "opacity").unwrap_or("1");
                out.push_str(&format!(r#"<path d="{d}" fill="{fill}" opacity="{opacity}"/>"#));
            }
            None => out.push_str(&rest[open..close + "</text>".len()]),
        }
        rest = &rest[close + "</text>".len()..];
    }
    out.push_str(rest);
    out
}
