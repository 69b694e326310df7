// The waveform of one recording: a canvas drawn from min/max per pixel column,
// the markers (lines on the canvas, labels above it), a cursor to play from,
// and the visible span (zoom and pan).
//
// Fast by construction: one pass over the visible samples per render (a 15 s
// request is 240 000 samples: a few milliseconds), one filled path for the
// whole waveform. The element it draws into carries what a test or a curious
// user can read: data-view-start / data-view-end (samples), data-render-ms,
// data-axis (each time label drawn: [text, left px, right px]).
//
// Nothing is cut at the right edge: a marker label that would run past it is
// drawn to the left of its marker, and so is the time axis's last label. The
// label rows are counted once, when a recording is loaded (all of it in
// view, where labels crowd most): zooming never changes the height, so the
// waveform never jumps under the pointer.

export const MARKERS = {
  preroll_start: { label: "preroll start", color: "--vs-marker-preroll" },
  splice: { label: "splice", color: "--vs-marker-splice" },
  wake_cut: { label: "wake cut", color: "--vs-marker-wake" },
  speech_start: { label: "speech start", color: "--vs-marker-speech-start" },
  speech_end: { label: "speech end", color: "--vs-marker-speech-end" },
  stream_end: { label: "stream end", color: "--vs-marker-stream-end" },
};
const MIN_SPAN = 64; // samples: 4 ms at 16 kHz
const LABEL_ROW_PX = 18;
const LABEL_GAP_PX = 4;
const AXIS_PX = 16;
const AXIS_LABEL_PX = 3; // from its tick
const TICK_SPACING_PX = 80;
const TICKS_S = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30];

export class Waveform {
  /** Draw into `host` (an empty element); `onCursor(sample)` hears clicks. */
  constructor(host, onCursor) {
    this.host = host;
    this.onCursor = onCursor;
    host.innerHTML = `<div class="labels"></div><canvas></canvas>
      <div class="cursor" hidden></div><div class="playhead" hidden></div>`;
    this.labels = host.querySelector(".labels");
    this.canvas = host.querySelector("canvas");
    this.cursorLine = host.querySelector(".cursor");
    this.playheadLine = host.querySelector(".playhead");
    this.samples = new Int16Array(0);
    this.rate = 16000;
    this.markers = [];
    this.start = 0;
    this.end = 0;
    this.cursor = 0;
    this.labelRows = 1; // counted with all of the recording in view (see the top)
    this._rowsCountedAt = null; // the width they were counted at
    this.lastRenderMs = null;
    this._bindPointer();
    this._resize = new ResizeObserver(() => this.render());
    this._resize.observe(this.canvas);
  }

  disconnect() {
    this._resize.disconnect();
  }

  load(samples, rate, markers) {
    this.samples = samples;
    this.rate = rate;
    this.markers = markers.filter((m) => m.name in MARKERS);
    this.start = 0;
    this.end = Math.max(samples.length, 1);
    this.cursor = 0;
    this._rowsCountedAt = null; // count the label rows again
    this.render();
  }

  get span() {
    return this.end - this.start;
  }

  /** Zoom by `factor` (> 1: in) keeping `anchor` (a sample) in place. */
  zoom(factor, anchor = this.start + this.span / 2) {
    const total = Math.max(this.samples.length, 1);
    const span = Math.min(total, Math.max(MIN_SPAN, this.span / factor));
    const ratio = (anchor - this.start) / this.span;
    this._show(anchor - ratio * span, span);
  }

  /** Move the view by `fraction` of its span (negative: to the left). */
  pan(fraction) {
    this._show(this.start + fraction * this.span, this.span);
  }

  reset() {
    this._show(0, Math.max(this.samples.length, 1));
  }

  setCursor(sample) {
    this.cursor = Math.max(0, Math.min(this.samples.length, Math.round(sample)));
    this._place(this.cursorLine, this.cursor);
  }

  setPlayhead(sample) {
    this._place(this.playheadLine, sample);
  }

  _show(start, span) {
    const total = Math.max(this.samples.length, 1);
    const clamped = Math.max(0, Math.min(total - span, start));
    this.start = Math.round(clamped);
    this.end = Math.round(clamped + span);
    this.render();
  }

  _x(sample) {
    return ((sample - this.start) / this.span) * this.canvas.clientWidth;
  }

  _place(line, sample) {
    const visible = sample !== null && sample >= this.start && sample <= this.end;
    line.hidden = !visible;
    if (visible) line.style.left = `${this._x(sample)}px`;
  }

  render() {
    const began = performance.now();
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    if (!width || !height) return;
    const scale = window.devicePixelRatio || 1;
    const w = Math.round(width * scale);
    const h = Math.round(height * scale);
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    const style = getComputedStyle(this.host);
    const color = (name) => style.getPropertyValue(name).trim();
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(scale, 0, 0, scale, 0, 0);
    ctx.fillStyle = color("--vs-wave-background");
    ctx.fillRect(0, 0, width, height);
    const waveHeight = height - AXIS_PX;
    this._drawAxis(ctx, width, waveHeight, color);
    ctx.fillStyle = color("--vs-wave-color");
    ctx.strokeStyle = ctx.fillStyle;
    this._drawSamples(ctx, width, waveHeight);
    this._drawMarkers(ctx, waveHeight, color);
    this.setCursor(this.cursor);
    this.host.dataset.viewStart = String(this.start);
    this.host.dataset.viewEnd = String(this.end);
    this.lastRenderMs = performance.now() - began;
    this.host.dataset.renderMs = this.lastRenderMs.toFixed(2);
  }

  _drawSamples(ctx, width, height) {
    const samples = this.samples;
    const mid = height / 2;
    const gain = (height / 2 - 2) / 32768;
    const perColumn = this.span / width;
    if (perColumn < 1) {
      // Zoomed in past one sample a pixel: a line through the samples.
      ctx.beginPath();
      const last = Math.min(samples.length - 1, this.end + 1);
      for (let i = Math.max(0, this.start - 1); i <= last; i++) {
        const x = this._x(i);
        const y = mid - samples[i] * gain;
        if (i <= this.start) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
      ctx.lineWidth = 1.5;
      ctx.stroke();
      return;
    }
    ctx.beginPath();
    for (let x = 0; x < width; x++) {
      const from = Math.floor(this.start + x * perColumn);
      const to = Math.min(samples.length, Math.max(from + 1, Math.floor(this.start + (x + 1) * perColumn)));
      let low = 0;
      let high = 0;
      for (let i = from; i < to; i++) {
        const value = samples[i];
        if (value < low) low = value;
        else if (value > high) high = value;
      }
      const top = mid - high * gain;
      ctx.rect(x, top, 1, Math.max(1, (high - low) * gain));
    }
    ctx.fill();
  }

  _drawAxis(ctx, width, height, color) {
    const seconds = this.span / this.rate;
    const step = TICKS_S.find((s) => (s / seconds) * width >= TICK_SPACING_PX) ?? 60;
    ctx.fillStyle = color("--vs-wave-grid");
    ctx.fillRect(0, height / 2, width, 1);
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "bottom";
    const digits = step < 0.01 ? 3 : step < 0.1 ? 2 : step < 1 ? 1 : 0;
    const drawn = [];
    for (let n = Math.ceil(this.start / this.rate / step); n * step * this.rate <= this.end; n++) {
      const t = n * step; // no drift from adding steps up
      const x = Math.round(this._x(t * this.rate));
      const text = `${t.toFixed(digits)} s`;
      const size = ctx.measureText(text).width;
      // Past the right edge it goes to the left of its tick.
      const left = x + AXIS_LABEL_PX + size <= width ? x + AXIS_LABEL_PX : x - AXIS_LABEL_PX - size;
      ctx.fillStyle = color("--vs-wave-grid");
      ctx.fillRect(x, 0, 1, height);
      ctx.fillStyle = color("--vs-wave-text");
      ctx.fillText(text, left, height + AXIS_PX);
      drawn.push([text, Math.round(left), Math.round(left + size)]);
    }
    this.host.dataset.axis = JSON.stringify(drawn);
  }

  _drawMarkers(ctx, height, color) {
    const width = this.canvas.clientWidth;
    // Every label, hidden, to measure it; the ones in view are then placed.
    this.labels.innerHTML = this.markers
      .map((marker) => {
        const info = MARKERS[marker.name];
        return `<span class="marker" data-marker="${marker.name}" data-sample="${marker.sample}"
          style="visibility:hidden;--marker:var(${info.color})"
          title="${info.label}: sample ${marker.sample} (${(marker.sample / this.rate).toFixed(3)} s)">${info.label}</span>`;
      })
      .join("");
    const spans = [...this.labels.children];
    const sizes = spans.map((span) => span.getBoundingClientRect().width);
    if (this._rowsCountedAt !== width) {
      const total = Math.max(this.samples.length, 1);
      const all = this.markers.map((m, i) => ({ x: (m.sample / total) * width, size: sizes[i] }));
      this.labelRows = placeLabels(all, width, Infinity).rows;
      this._rowsCountedAt = width;
    }
    const shown = [];
    this.markers.forEach((marker, i) => {
      const x = this._x(marker.sample);
      if (x < -1 || x > width + 1) {
        spans[i].remove();
        return;
      }
      ctx.fillStyle = color(MARKERS[marker.name].color);
      ctx.fillRect(Math.round(x) - 1, 0, 2, height);
      shown.push({ x, size: sizes[i], span: spans[i] });
    });
    for (const { span, left, row, flip } of placeLabels(shown, width, this.labelRows).labels) {
      span.classList.toggle("flip", flip);
      span.style.left = `${left}px`;
      span.style.top = `${row * LABEL_ROW_PX}px`;
      span.style.visibility = "";
    }
    this.labels.style.height = `${this.labelRows * LABEL_ROW_PX}px`;
  }

  _bindPointer() {
    const sampleAt = (event) => {
      const box = this.canvas.getBoundingClientRect();
      return this.start + ((event.clientX - box.left) / box.width) * this.span;
    };
    let drag = null;
    this.canvas.addEventListener("pointerdown", (event) => {
      drag = { x: event.clientX, start: this.start, moved: false };
      this.canvas.setPointerCapture(event.pointerId);
    });
    this.canvas.addEventListener("pointermove", (event) => {
      if (!drag) return;
      const dx = event.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) this._show(drag.start - (dx / this.canvas.clientWidth) * this.span, this.span);
    });
    this.canvas.addEventListener("pointerup", (event) => {
      if (drag && !drag.moved) this.onCursor(sampleAt(event));
      drag = null;
    });
    this.canvas.addEventListener(
      "wheel",
      (event) => {
        event.preventDefault();
        if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
          this.pan(Math.sign(event.deltaX || event.deltaY) * 0.1);
        } else {
          this.zoom(event.deltaY < 0 ? 1.25 : 0.8, sampleAt(event));
        }
      },
      { passive: false },
    );
  }
}

/**
 * Labels ({x, size, ...}) in rows: each starts at its marker, or ends there
 * when it would run past `width`; a label goes in the first row where it
 * overlaps nothing, or, once `maxRows` are taken, in the least crowded one.
 */
function placeLabels(labels, width, maxRows) {
  const placed = labels.map((label) => {
    const flip = label.x - 1 + label.size > width;
    const at = flip ? label.x + 1 - label.size : label.x - 1;
    const left = Math.max(0, Math.min(width - label.size, at)); // its line may sit on the edge
    return { ...label, flip, left, right: left + label.size };
  });
  placed.sort((a, b) => a.left - b.left);
  const ends = []; // per row, where its last label ends
  for (const label of placed) {
    let row = ends.findIndex((end) => end + LABEL_GAP_PX <= label.left);
    if (row < 0) row = ends.length < maxRows ? ends.length : ends.indexOf(Math.min(...ends));
    ends[row] = label.right;
    label.row = row;
  }
  return { labels: placed, rows: Math.max(1, ends.length) };
}
