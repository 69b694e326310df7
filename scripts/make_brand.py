"""Draw VoiceStack's brand images (icon and logo, light and dark, 1x and 2x).

Since Home Assistant 2026.3 a custom integration ships its own icon and logo in
``custom_components/<domain>/brand/``; without them the UI shows a placeholder.
The shipped files are this script's output, drawn from geometry alone (no
downloads, fonts or copied artwork), so they are reproducible and licence-free:
same bytes on every run. A test runs ``--check``, which fails when the files on
disk are not what the script draws. Run (from the repository's root):

    scripts/ha-run .venv/bin/python -m scripts.make_brand [--check]

The mark is a stack of speech bubbles, the front one holding a voice waveform;
the logo adds the word "VoiceStack" in a monoline lettering drawn from strokes
and arcs. Shapes are signed distance fields, so edges are anti-aliased exactly
and only IEEE-exact operations (no trigonometry) touch the pixels.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import struct
import sys
import zlib

import numpy as np

BRAND_DIR = Path(__file__).resolve().parents[1] / "custom_components/voicestack/brand"
ICON_PX = 256
LOGO_HEIGHT_PX = 128

Sdf = Callable[[np.ndarray, np.ndarray], np.ndarray]
Rgb = tuple[int, int, int]


# -- signed distance fields (negative inside; in the units of x and y) ---------


def rounded_rect(x0: float, y0: float, x1: float, y1: float, r: float) -> Sdf:
    """A rectangle with corners rounded by ``r``."""
    cx, cy, hx, hy = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2 - r, (y1 - y0) / 2 - r

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        qx, qy = np.abs(x - cx) - hx, np.abs(y - cy) - hy
        ox, oy = np.maximum(qx, 0.0), np.maximum(qy, 0.0)
        return np.sqrt(ox * ox + oy * oy) + np.minimum(np.maximum(qx, qy), 0.0) - r

    return sdf


def polygon(points: Sequence[tuple[float, float]], r: float = 0.0) -> Sdf:
    """A polygon, grown by ``r`` (which rounds its corners)."""

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x0, y0 = points[0]
        dist2 = (x - x0) * (x - x0) + (y - y0) * (y - y0)
        sign = np.ones_like(x)
        for (ax, ay), (bx, by) in zip(points, [*points[1:], points[0]], strict=True):
            ex, ey = bx - ax, by - ay
            wx, wy = x - ax, y - ay
            t = np.clip((wx * ex + wy * ey) / (ex * ex + ey * ey), 0.0, 1.0)
            px, py = wx - ex * t, wy - ey * t
            dist2 = np.minimum(dist2, px * px + py * py)
            # Winding: flip the sign where the edge crosses the point's row.
            up, down = y >= ay, y < by
            left = ex * wy > ey * wx
            crossing = (up & down & left) | (~up & ~down & ~left)
            sign = np.where(crossing, -sign, sign)
        return sign * np.sqrt(dist2) - r

    return sdf


def stroke(a: tuple[float, float], b: tuple[float, float], half: float) -> Sdf:
    """A straight stroke from ``a`` to ``b`` with round ends."""
    ax, ay = a
    ex, ey = b[0] - ax, b[1] - ay
    length2 = ex * ex + ey * ey

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        wx, wy = x - ax, y - ay
        t = np.clip((wx * ex + wy * ey) / length2, 0.0, 1.0) if length2 else 0.0
        px, py = wx - ex * t, wy - ey * t
        return np.sqrt(px * px + py * py) - half

    return sdf


def disk(cx: float, cy: float, r: float) -> Sdf:
    """A filled circle."""

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy)) - r

    return sdf


def ring(c: tuple[float, float], r: float, half: float) -> Sdf:
    """A circular stroke all round."""
    cx, cy = c

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.abs(np.sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy)) - r) - half

    return sdf


def _unit(v: tuple[float, float]) -> tuple[float, float]:
    norm = math.sqrt(v[0] * v[0] + v[1] * v[1])
    return v[0] / norm, v[1] / norm


def arc(
    c: tuple[float, float],
    r: float,
    start: tuple[float, float],
    end: tuple[float, float],
    half: float,
) -> Sdf:
    """A circular stroke from direction ``start`` counter-clockwise to ``end``.

    Directions are vectors rather than angles, and "counter-clockwise" is as
    drawn with y pointing up (the lettering's coordinates), so the sweep test is
    two cross products.
    """
    (ux, uy), (vx, vy) = _unit(start), _unit(end)
    cx, cy = c
    ends = (cx + r * ux, cy + r * uy), (cx + r * vx, cy + r * vy)
    wide = ux * vy - uy * vx < 0  # the sweep is more than half a turn

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        px, py = x - cx, y - cy
        after_start = ux * py - uy * px >= 0
        before_end = px * vy - py * vx >= 0
        inside = (after_start | before_end) if wide else (after_start & before_end)
        ring = np.abs(np.sqrt(px * px + py * py) - r)
        (sx, sy), (tx, ty) = ends
        cap = np.minimum(
            np.sqrt((x - sx) * (x - sx) + (y - sy) * (y - sy)),
            np.sqrt((x - tx) * (x - tx) + (y - ty) * (y - ty)),
        )
        return np.where(inside, ring, cap) - half

    return sdf


def union(*parts: Sdf) -> Sdf:
    """Everything inside any of ``parts``."""

    def sdf(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        d = parts[0](x, y)
        for part in parts[1:]:
            d = np.minimum(d, part(x, y))
        return d

    return sdf


# -- the canvas ------------------------------------------------------------------


@dataclass
class Canvas:
    """Premultiplied RGBA in floats; ``unit_px`` pixels per drawing unit."""

    width: int
    height: int
    unit_px: float
    rgba: np.ndarray

    @classmethod
    def blank(cls, width: int, height: int, unit_px: float) -> Canvas:
        """A transparent canvas."""
        return cls(width, height, unit_px, np.zeros((height, width, 4)))

    def grid(
        self, ox: float, oy: float, unit: float, flip: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pixel centres in a local frame: origin (ox, oy) and ``unit``, in units.

        With ``flip`` y points up (the lettering's frame).
        """
        cols = (np.arange(self.width) + 0.5) / self.unit_px
        rows = (np.arange(self.height) + 0.5) / self.unit_px
        x, y = np.meshgrid((cols - ox) / unit, (rows - oy) / unit)
        return x, (-y if flip else y)

    def coverage(self, d: np.ndarray, unit: float = 1.0) -> np.ndarray:
        """How much of each pixel a shape covers (its distance ``d`` in ``unit``)."""
        return np.clip(0.5 - d * unit * self.unit_px, 0.0, 1.0)

    def paint(self, alpha: np.ndarray, color: np.ndarray | Rgb) -> None:
        """Lay ``color`` (one colour, or one per pixel) over what is there."""
        rgb = np.broadcast_to(np.asarray(color, dtype=float) / 255.0, (*alpha.shape, 3))
        src = np.concatenate([rgb * alpha[..., None], alpha[..., None]], axis=-1)
        self.rgba = src + self.rgba * (1.0 - alpha[..., None])

    def to_bytes(self) -> np.ndarray:
        """8-bit straight RGBA; fully transparent pixels are (0, 0, 0, 0)."""
        alpha = self.rgba[..., 3:]
        rgb = np.where(alpha > 0, self.rgba[..., :3] / np.maximum(alpha, 1e-12), 0.0)
        out = np.rint(np.concatenate([rgb, alpha], axis=-1) * 255.0)
        return np.clip(out, 0, 255).astype(np.uint8)


def vertical_gradient(
    y: np.ndarray, y0: float, y1: float, top: Rgb, bottom: Rgb
) -> np.ndarray:
    """``top`` at y0 blending into ``bottom`` at y1, one colour per pixel."""
    t = np.clip((y - y0) / (y1 - y0), 0.0, 1.0)[..., None]
    return np.asarray(top, dtype=float) * (1.0 - t) + np.asarray(bottom) * t


# -- the mark: a stack of speech bubbles, the front one holding a waveform -------


@dataclass(frozen=True)
class Palette:
    """Colours of one variant (light: for light backgrounds; dark: for dark)."""

    front_top: Rgb
    front_bottom: Rgb
    middle: Rgb
    back: Rgb
    wave: Rgb
    word_voice: Rgb
    word_stack: Rgb


LIGHT = Palette(
    front_top=(0x4A, 0x86, 0xFF),
    front_bottom=(0x25, 0x4F, 0xE0),
    middle=(0x6F, 0x9C, 0xFF),
    back=(0xA9, 0xC3, 0xFF),
    wave=(0xFF, 0xFF, 0xFF),
    word_voice=(0x1B, 0x25, 0x3D),
    word_stack=(0x2A, 0x5C, 0xF0),
)
DARK = Palette(
    front_top=(0x6E, 0xA0, 0xFF),
    front_bottom=(0x3F, 0x6D, 0xFF),
    middle=(0x93, 0xB6, 0xFF),
    back=(0xC6, 0xD7, 0xFF),
    wave=(0xFF, 0xFF, 0xFF),
    word_voice=(0xEE, 0xF2, 0xFA),
    word_stack=(0x86, 0xAC, 0xFF),
)

# In mark units (the front bubble is 1 wide), y down.
FRONT_TOP, FRONT_BOTTOM = 0.34, 0.90
FRONT = union(
    rounded_rect(0.0, FRONT_TOP, 1.0, FRONT_BOTTOM, 0.16),
    polygon([(0.16, 0.84), (0.44, 0.84), (0.11, 1.03)], r=0.025),
)
MIDDLE = rounded_rect(0.10, 0.18, 0.90, 0.70, 0.13)
BACK = rounded_rect(0.21, 0.02, 0.79, 0.50, 0.11)
GAP = 0.045  # transparent space between the bubbles
WAVE_HALF = 0.042
WAVE = union(
    *(
        stroke((x, 0.62 - h / 2 + WAVE_HALF), (x, 0.62 + h / 2 - WAVE_HALF), WAVE_HALF)
        for x, h in zip(
            (0.2, 0.35, 0.5, 0.65, 0.8), (0.14, 0.30, 0.40, 0.26, 0.12), strict=True
        )
    )
)
# What the mark covers (tail tip grown by its rounding): x 0..1, y 0.02..1.055.
MARK_TOP, MARK_BOTTOM, MARK_WIDTH = 0.02, 1.055, 1.0


def draw_mark(canvas: Canvas, ox: float, oy: float, unit: float, pal: Palette) -> None:
    """The mark with its top-left corner (0, MARK_TOP) at (ox, oy), ``unit`` wide."""
    x, y = canvas.grid(ox, oy - MARK_TOP * unit, unit)
    front = FRONT(x, y)
    middle = MIDDLE(x, y)
    canvas.paint(canvas.coverage(np.maximum(BACK(x, y), GAP - middle), unit), pal.back)
    canvas.paint(canvas.coverage(np.maximum(middle, GAP - front), unit), pal.middle)
    gradient = vertical_gradient(
        y, FRONT_TOP, FRONT_BOTTOM, pal.front_top, pal.front_bottom
    )
    canvas.paint(canvas.coverage(front, unit), gradient)
    canvas.paint(canvas.coverage(WAVE(x, y), unit), pal.wave)


# -- the word: monoline letters from strokes and arcs ------------------------------

# In em, y up, baseline 0: x-height 0.5, capitals 0.7, stroke 0.12.
H = 0.06  # half the stroke
XH, BOWL = 0.5, (0.25, 0.25)
ROUND = 0.25 - H  # radius of round lowercase bowls


@dataclass(frozen=True)
class Glyph:
    """A letter: its shape and how wide it is (outer edges, in em)."""

    width: float
    shape: Sdf


GLYPHS = {
    "V": Glyph(
        0.64,
        union(
            stroke((H, 0.7 - H), (0.32, H), H),
            stroke((0.32, H), (0.64 - H, 0.7 - H), H),
        ),
    ),
    "o": Glyph(0.5, ring(BOWL, ROUND, H)),
    "i": Glyph(2 * H, union(stroke((H, H), (H, XH - H), H), disk(H, 0.64, 0.075))),
    "c": Glyph(0.45, arc(BOWL, ROUND, (1, 1), (1, -1), H)),
    "e": Glyph(
        0.5,
        union(
            stroke((H, 0.25), (XH - H, 0.25), H), arc(BOWL, ROUND, (1, 0), (1, -0.8), H)
        ),
    ),
    "S": Glyph(
        0.43,
        union(
            arc((0.215, 0.505), 0.135, (0.9, 0.55), (0, -1), H),
            arc((0.215, 0.215), 0.155, (-0.9, -0.5), (0, 1), H),
        ),
    ),
    "t": Glyph(
        0.36,
        union(
            stroke((0.16, H), (0.16, 0.66), H), stroke((H, XH - H), (0.30, XH - H), H)
        ),
    ),
    "a": Glyph(
        0.5, union(ring(BOWL, ROUND, H), stroke((XH - H, H), (XH - H, XH - H), H))
    ),
    "k": Glyph(
        0.48,
        union(
            stroke((H, H), (H, 0.66), H),
            stroke((0.40, XH - H), (0.09, 0.19), H),
            stroke((0.20, 0.28), (0.42, H), H),
        ),
    ),
}
LETTER_GAP = 0.085  # em between the outer edges of neighbours
KERNING = {"Vo": -0.07}


def word_layout(text: str) -> tuple[list[tuple[str, float]], float]:
    """Where each letter starts (em) and the word's width (em)."""
    placed, x = [], 0.0
    for i, letter in enumerate(text):
        if i:
            x += LETTER_GAP + KERNING.get(text[i - 1 : i + 1], 0.0)
        placed.append((letter, x))
        x += GLYPHS[letter].width
    return placed, x


def draw_word(
    canvas: Canvas, text: str, ox: float, baseline: float, em: float, *, color: Rgb
) -> None:
    """``text`` with its left edge at ``ox`` on ``baseline``, ``em`` tall."""
    for letter, at in word_layout(text)[0]:
        x, y = canvas.grid(ox + at * em, baseline, em, flip=True)
        canvas.paint(canvas.coverage(GLYPHS[letter].shape(x, y), em), color)


# -- the images --------------------------------------------------------------------

ICON_MARGIN = 0.02  # mark units, around the mark in the square
LOGO_MARGIN = 2.0  # logo pixels (at 1x) around mark and word
WORD_CAP = 56.0  # height of the capitals in the logo, pixels at 1x
WORD_SPACE = 26.0  # between mark and word, pixels at 1x


def icon(size: int, pal: Palette) -> np.ndarray:
    """The mark centred in a ``size`` square."""
    extent = MARK_BOTTOM - MARK_TOP + 2 * ICON_MARGIN
    canvas = Canvas.blank(size, size, size / extent)
    left = (extent - MARK_WIDTH) / 2
    draw_mark(canvas, left, ICON_MARGIN, 1.0, pal)
    return canvas.to_bytes()


def logo(scale: int, pal: Palette) -> np.ndarray:
    """Mark and "VoiceStack", LOGO_HEIGHT_PX tall at ``scale`` 1 (double at 2)."""
    mark_unit = (LOGO_HEIGHT_PX - 2 * LOGO_MARGIN) / (MARK_BOTTOM - MARK_TOP)
    em = WORD_CAP / 0.7
    word_x = LOGO_MARGIN + MARK_WIDTH * mark_unit + WORD_SPACE
    width = math.ceil(word_x + word_layout("VoiceStack")[1] * em + LOGO_MARGIN)
    canvas = Canvas.blank(width * scale, LOGO_HEIGHT_PX * scale, float(scale))
    draw_mark(canvas, LOGO_MARGIN, LOGO_MARGIN, mark_unit, pal)
    baseline = (LOGO_HEIGHT_PX + WORD_CAP) / 2
    voice_em = word_layout("Voice")[1] + LETTER_GAP
    draw_word(canvas, "Voice", word_x, baseline, em, color=pal.word_voice)
    draw_word(
        canvas, "Stack", word_x + voice_em * em, baseline, em, color=pal.word_stack
    )
    return canvas.to_bytes()


def png(rgba: np.ndarray) -> bytes:
    """An 8-bit RGBA PNG (no filtering, maximum compression)."""
    height, width, _ = rgba.shape
    rows = np.concatenate(
        [np.zeros((height, 1), np.uint8), rgba.reshape(height, -1)], axis=1
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)),
            chunk(b"IEND", b""),
        )
    )


def render() -> dict[str, bytes]:
    """Every brand image, by file name."""
    images = {}
    for prefix, pal in (("", LIGHT), ("dark_", DARK)):
        images[f"{prefix}icon.png"] = png(icon(ICON_PX, pal))
        images[f"{prefix}icon@2x.png"] = png(icon(2 * ICON_PX, pal))
        images[f"{prefix}logo.png"] = png(logo(1, pal))
        images[f"{prefix}logo@2x.png"] = png(logo(2, pal))
    return images


def _pixels(data: bytes) -> tuple[bytes, bytes] | None:
    """IHDR and inflated image data of a PNG, or None if it is not one.

    Comparing these rather than the files' bytes lets another zlib compress the
    same pixels differently without the check failing.
    """
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    header, idat, at = b"", bytearray(), 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    try:
        return header, zlib.decompress(bytes(idat))
    except zlib.error:
        return None


def stale(brand_dir: Path, images: dict[str, bytes]) -> list[str]:
    """The images in ``brand_dir`` that are missing or differ from ``images``."""
    return [
        name
        for name, data in images.items()
        if not (brand_dir / name).is_file()
        or _pixels((brand_dir / name).read_bytes()) != _pixels(data)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the images, or with ``--check`` report the ones out of date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files differ from what would be drawn",
    )
    parser.add_argument("--dir", type=Path, default=BRAND_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    images = render()
    if args.check:
        out_of_date = stale(args.dir, images)
        for name in out_of_date:
            print(
                f"{args.dir / name}: missing or not what scripts/make_brand.py draws;"
                " run: scripts/ha-run .venv/bin/python -m scripts.make_brand"
            )
        return 1 if out_of_date else 0
    args.dir.mkdir(parents=True, exist_ok=True)
    for name, data in images.items():
        (args.dir / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
