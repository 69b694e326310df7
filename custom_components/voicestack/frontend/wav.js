// A recording's WAV as samples, and playing it from a point.
//
// The library writes 16-bit mono PCM WAVs (the contract): the samples are read
// in place as an Int16Array, no copy, so a minute of audio costs nothing to
// open. Playback goes through WebAudio from those samples: the browser's own
// <audio> would need the file again and cannot be started at a sample.

/** Parse a 16-bit PCM WAV: {rate, channels, samples: Int16Array (mono)}. */
export function parseWav(buffer) {
  const view = new DataView(buffer);
  const tag = (offset) =>
    String.fromCharCode(...new Uint8Array(buffer, offset, 4));
  if (buffer.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") {
    throw new Error("not a WAV file");
  }
  let format = null;
  let offset = 12;
  while (offset + 8 <= buffer.byteLength) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      format = {
        encoding: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        rate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      if (!format || format.encoding !== 1 || format.bits !== 16) {
        throw new Error("not 16-bit PCM");
      }
      const length = Math.min(size, buffer.byteLength - body) >> 1;
      const all = body % 2 === 0
        ? new Int16Array(buffer, body, length)
        : new Int16Array(buffer.slice(body, body + length * 2));
      return { rate: format.rate, channels: format.channels, samples: mono(all, format.channels) };
    }
    offset = body + size + (size % 2);
  }
  throw new Error("WAV without data");
}

function mono(samples, channels) {
  if (channels === 1) return samples;
  const out = new Int16Array(Math.floor(samples.length / channels));
  for (let i = 0; i < out.length; i++) out[i] = samples[i * channels];
  return out;
}

/** Plays samples from a point; `position()` is the sample now heard. */
export class Player {
  constructor() {
    this._context = null;
    this._source = null;
    this._startedAt = 0;
    this._from = 0;
    this._rate = 16000;
    this.onended = null;
  }

  get playing() {
    return this._source !== null;
  }

  /** Play from sample `from`; false when there is nothing after it to play. */
  play(samples, rate, from) {
    this.stop();
    const count = samples.length - from;
    if (count <= 0) return false;
    this._context ??= new AudioContext();
    const buffer = this._context.createBuffer(1, count, rate);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < count; i++) channel[i] = samples[from + i] / 32768;
    const source = this._context.createBufferSource();
    source.buffer = buffer;
    source.connect(this._context.destination);
    source.onended = () => {
      if (this._source !== source) return;
      this._source = null;
      this.onended?.();
    };
    this._source = source;
    this._from = from;
    this._rate = rate;
    this._startedAt = this._context.currentTime;
    this._context.resume();
    source.start();
    return true;
  }

  position() {
    if (!this._source) return null;
    return this._from + Math.round((this._context.currentTime - this._startedAt) * this._rate);
  }

  stop() {
    const source = this._source;
    this._source = null;
    source?.stop();
  }

  close() {
    this.stop();
    this._context?.close();
    this._context = null;
  }
}
