// VoiceStack's debug panel: what each satellite heard, in Home Assistant's sidebar.
//
// A plain custom element (no build step, no framework): Home Assistant hands a
// custom panel its `hass`, `narrow`, `route` and `panel` properties, and that is
// all this needs. Nothing to bundle means nothing to keep in sync and nothing
// fetched from a CDN; the files under frontend/ are what runs.
//
// The list comes from `voicestack/recordings/list` and stays live through
// `voicestack/recordings/subscribe`; a selected request's metadata comes from
// `voicestack/recordings/get` and its audio from the authenticated view
// `/api/voicestack/recordings/<id>.wav` (admin only, like the panel).
//
// What fails on one request stays on that request: a delete that fails shows
// its error on the request's row (and in Home Assistant's toast); only a lost
// connection turns the panel offline.

import {
  dateFormat,
  decisionHtml,
  escape,
  formatTime,
  metadataHtml,
  playbackHtml,
  timingsHtml,
  tokensHtml,
} from "./details.js";
import { agentHtml, resultChip, stagesHtml } from "./result.js";
import { STYLES } from "./styles.js";
import { Player, parseWav } from "./wav.js";
import { MARKERS, Waveform } from "./waveform.js";

const PLAYHEAD_MS = 50;
const ARRIVE_MS = 2000; // the "just arrived" highlight (styles.js: arrive)

class VoiceStackDebugPanel extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    this._hass = null;
    this._recordings = [];
    this._selected = null; // {meta, samples, rate} of the open request
    this._fresh = new Map(); // id → when it arrived (performance.now()), while highlighted
    this._rowErrors = new Map(); // id → what failed on that request (a delete)
    this._dates = dateFormat(null);
    this._locale = "";
    this._unsubscribe = null; // resolves to the subscription's remover
    this._started = false;
    this._player = new Player();
    this._player.onended = () => this._playing(false);
    this._timer = null;
    this._waveform = null;
    this._error = "";
  }

  // -- Home Assistant's panel properties -------------------------------------------

  set hass(hass) {
    const dark = hass.themes?.darkMode;
    if (this._hass && dark !== this._hass.themes?.darkMode) {
      // The canvas reads the theme's colours when it draws: draw again.
      requestAnimationFrame(() => this._waveform?.render());
    }
    this._hass = hass;
    const menu = this.shadowRoot.querySelector("ha-menu-button");
    if (menu) menu.hass = hass;
    const locale = JSON.stringify([hass.locale, hass.language, hass.config?.time_zone]);
    if (locale !== this._locale) {
      // The user's language, 12/24 hours or time zone: dates as Home Assistant shows them.
      this._locale = locale;
      this._dates = dateFormat(hass);
      if (this.shadowRoot.childElementCount) {
        this._renderList();
        const started = this.shadowRoot.querySelector(".details .started");
        if (started && this._selected) started.textContent = this._dates.format(new Date(this._selected.meta.started));
      }
    }
    this._start();
  }

  get hass() {
    return this._hass;
  }

  set narrow(narrow) {
    this.toggleAttribute("narrow", Boolean(narrow));
    const menu = this.shadowRoot.querySelector("ha-menu-button");
    if (menu) menu.narrow = Boolean(narrow);
  }

  set route(_route) {}

  set panel(_panel) {}

  /** The waveform's last render, in milliseconds (null before the first). */
  get lastRenderMs() {
    return this._waveform?.lastRenderMs ?? null;
  }

  connectedCallback() {
    if (!this.shadowRoot.childElementCount) this._layout();
    if (this._hass) this._start();
  }

  disconnectedCallback() {
    this._stopPlaying();
    this._player.close();
    this._waveform?.disconnect();
    this._waveform = null;
    this._unsubscribe?.then((unsubscribe) => unsubscribe()).catch(() => {});
    this._unsubscribe = null;
    this._started = false;
  }

  // -- the page ------------------------------------------------------------------------

  _layout() {
    this.shadowRoot.innerHTML = `<style>${STYLES}</style>
      <div class="toolbar">
        ${customElements.get("ha-menu-button")
          ? "<ha-menu-button></ha-menu-button>"
          : '<button class="fallback-menu" aria-label="Sidebar">☰</button>'}
        <div class="title">Voice debug</div>
      </div>
      <div class="content">
        <section class="card list" aria-label="Recent requests">
          <h2>Requests <span class="live off">connecting</span></h2>
          <ul class="requests"></ul>
        </section>
        <section class="details" aria-live="polite"></section>
      </div>
      <dialog class="confirm" aria-labelledby="confirm-title">
        <h2 id="confirm-title">Delete this recording?</h2>
        <p class="question"></p>
        <form method="dialog" class="buttons">
          <button class="action" value="cancel" autofocus>Cancel</button>
          <button class="action danger filled" value="delete">Delete</button>
        </form>
      </dialog>`;
    const menu = this.shadowRoot.querySelector("ha-menu-button");
    if (menu) {
      menu.hass = this._hass;
      menu.narrow = this.hasAttribute("narrow");
    }
    this.shadowRoot.querySelector(".fallback-menu")?.addEventListener("click", () =>
      this.dispatchEvent(new Event("hass-toggle-menu", { bubbles: true, composed: true })),
    );
    const requests = this.shadowRoot.querySelector(".requests");
    requests.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-id]");
      if (button) this._open(button.dataset.id);
    });
    requests.addEventListener("animationend", (event) => {
      // Highlighted once: a later redraw must not play it again.
      const button = event.target.closest("button[data-id]");
      this._fresh.delete(button?.dataset.id);
      button?.classList.remove("new");
    });
    this._showDetails();
  }

  /** Load the list and subscribe, once while connected. */
  async _start() {
    if (this._started || !this.isConnected) return;
    this._started = true;
    if (!this.shadowRoot.childElementCount) this._layout();
    try {
      const { recordings } = await this._hass.callWS({ type: "voicestack/recordings/list" });
      this._recordings = recordings;
      this._renderList();
      this._unsubscribe = this._hass.connection.subscribeMessage(
        (message) => this._onChange(message),
        { type: "voicestack/recordings/subscribe" },
      );
      await this._unsubscribe;
      this._live(true);
    } catch (err) {
      this._fail(`Could not load the recordings: ${err.message ?? err}`);
    }
  }

  _live(on) {
    const live = this.shadowRoot.querySelector(".live");
    live.classList.toggle("off", !on);
    live.textContent = on ? "live" : "offline";
  }

  _onChange(message) {
    if (message.type === "added") {
      this._fresh.set(message.recording.id, performance.now());
      this._recordings = [message.recording, ...this._recordings.filter((r) => r.id !== message.recording.id)];
    } else if (message.type === "removed") {
      this._recordings = this._recordings.filter((r) => r.id !== message.recording_id);
      this._rowErrors.delete(message.recording_id);
      this._fresh.delete(message.recording_id);
      if (this._selected?.meta.id === message.recording_id) {
        this._close();
      }
    }
    this._renderList();
  }

  _renderList() {
    const list = this.shadowRoot.querySelector(".requests");
    if (!this._recordings.length) {
      list.innerHTML = `<li class="empty" style="padding:8px 16px">No recordings yet. Turn on
        <b>Record requests</b> on a satellite's device page, then speak to it.</li>`;
      return;
    }
    const open = this._selected?.meta.id;
    const now = performance.now();
    list.innerHTML = this._recordings
      .map((r) => {
        const text = r.text || r.stt_raw || "(nothing heard)";
        const route = r.frame ? `${r.frame} / ${r.rule}` : "";
        // A redraw while it is highlighted carries on where the highlight is.
        const age = now - (this._fresh.get(r.id) ?? -Infinity);
        const fresh = age < ARRIVE_MS ? `class="new" style="animation-delay:${-age}ms"` : "";
        if (!fresh) this._fresh.delete(r.id);
        const error = this._rowErrors.get(r.id);
        return `<li><button data-id="${escape(r.id)}" aria-current="${r.id === open}" ${fresh}>
          <span class="text">${escape(text)}</span>
          ${resultChip(r)}
          <span class="sub">${escape(r.satellite)} · ${formatTime(r.started, this._dates)}</span>
          <span class="sub">${Number(r.duration_s).toFixed(1)} s ${route ? `· ${escape(route)}` : ""}</span>
          ${error ? `<span class="row-error" role="alert">${escape(error)}</span>` : ""}
        </button></li>`;
      })
      .join("");
  }

  // -- one request ---------------------------------------------------------------------

  async _open(id) {
    this._stopPlaying();
    try {
      const [{ recording }, response] = await Promise.all([
        this._hass.callWS({ type: "voicestack/recordings/get", recording_id: id }),
        this._hass.fetchWithAuth(`/api/voicestack/recordings/${encodeURIComponent(id)}.wav`),
      ]);
      if (!response.ok) throw new Error(`the audio: HTTP ${response.status}`);
      const wav = parseWav(await response.arrayBuffer());
      this._selected = { meta: recording, samples: wav.samples, rate: wav.rate };
      this._error = "";
    } catch (err) {
      this._selected = null;
      this._error = `Could not open ${id}: ${err.message ?? err}`;
    }
    this._renderList();
    this._showDetails();
  }

  _close() {
    this._stopPlaying();
    this._selected = null;
    this._showDetails();
  }

  _showDetails() {
    const details = this.shadowRoot.querySelector(".details");
    this._waveform?.disconnect();
    this._waveform = null;
    delete details.dataset.loaded;
    if (!this._selected) {
      details.innerHTML = this._error
        ? `<div class="error wide" role="alert">${escape(this._error)}</div>`
        : `<div class="card wide placeholder muted">Pick a request to see its audio, what
            speech-to-text heard and what the router made of it.</div>`;
      return;
    }
    const { meta, samples, rate } = this._selected;
    const heard = meta.text || meta.stt?.raw || "";
    // A request without a wake word (a follow-up) has no wake cut to show,
    // also in recordings made before the recorder left it out.
    const markers = (meta.markers ?? []).filter((m) => m.name !== "wake_cut" || meta.wake_word);
    const names = new Set(markers.map((m) => m.name));
    details.innerHTML = `
      <div class="card wide">
        <p class="heard">${heard ? escape(heard) : '<span class="muted">(nothing heard)</span>'}
          ${resultChip(meta)}</p>
        <div class="controls" role="toolbar" aria-label="Waveform">
          ${button("play", "Play from the cursor", "▶ Play", "filled")}
          ${button("zoom-in", "Zoom in", "+")}
          ${button("zoom-out", "Zoom out", "−")}
          ${button("pan-left", "Pan left", "◀")}
          ${button("pan-right", "Pan right", "▶")}
          ${button("reset", "Show all", "Fit")}
          <span class="spacer"></span>
          ${button("download-wav", "Download the WAV", "WAV")}
          ${button("download-json", "Download the JSON", "JSON")}
          ${button("delete", "Delete this recording", "Delete", "danger")}
        </div>
        <div class="wave"></div>
        <div class="legend">${Object.entries(MARKERS)
          .filter(([name]) => names.has(name))
          .map(([, m]) => `<span style="--marker:var(${m.color})">${m.label}</span>`)
          .join("")}</div>
      </div>
      <div class="card result-card"><h2>Result ${resultChip(meta)}</h2>${stagesHtml(meta)}</div>
      <div class="card agent-card"><h2>Conversation agent</h2>${agentHtml(meta.agent, meta.decision)}</div>
      <div class="card"><h2>Speech-to-text</h2>${tokensHtml(meta.stt)}</div>
      <div class="card"><h2>Router decision</h2>${decisionHtml(meta.decision)}</div>
      <div class="card"><h2>Timings</h2>${timingsHtml(meta.timings)}</div>
      <div class="card"><h2>Said back</h2>${playbackHtml(meta.playback, meta.response)}</div>
      <div class="card wide"><h2>Request</h2>${metadataHtml(meta, this._dates)}</div>`;
    details.dataset.id = meta.id;
    details.querySelector(".controls").addEventListener("click", (event) => {
      const action = event.target.closest("button[data-action]")?.dataset.action;
      if (action) this._act(action);
    });
    this._waveform = new Waveform(details.querySelector(".wave"), (sample) => {
      this._waveform.setCursor(sample);
      if (this._player.playing) this._play();
    });
    this._waveform.load(samples, rate, markers);
    details.dataset.loaded = meta.id;
  }

  _act(action) {
    const wave = this._waveform;
    const actions = {
      play: () => (this._player.playing ? this._stopPlaying() : this._play()),
      "zoom-in": () => wave.zoom(2),
      "zoom-out": () => wave.zoom(0.5),
      "pan-left": () => wave.pan(-0.25),
      "pan-right": () => wave.pan(0.25),
      reset: () => wave.reset(),
      "download-wav": () => this._downloadWav(),
      "download-json": () => this._downloadJson(),
      delete: () => this._delete(),
    };
    actions[action]?.();
  }

  // -- play, download, delete ----------------------------------------------------------

  _play() {
    const { samples, rate } = this._selected;
    // From the cursor; with the cursor on the last sample there is nothing
    // after it: from the start.
    const from = this._waveform.cursor >= samples.length - 1 ? 0 : this._waveform.cursor;
    this._playing(this._player.play(samples, rate, from));
  }

  _stopPlaying() {
    this._player.stop();
    this._playing(false);
  }

  _playing(on) {
    clearInterval(this._timer);
    this._timer = null;
    const play = this.shadowRoot.querySelector('button[data-action="play"]');
    if (play) play.textContent = on ? "■ Stop" : "▶ Play";
    if (on) {
      this._timer = setInterval(() => this._waveform?.setPlayhead(this._player.position()), PLAYHEAD_MS);
    } else {
      this._waveform?.setPlayhead(null);
    }
  }

  async _downloadWav() {
    const id = this._selected.meta.id;
    const response = await this._hass.fetchWithAuth(`/api/voicestack/recordings/${encodeURIComponent(id)}.wav`);
    if (response.ok) save(await response.blob(), `${id}.wav`);
  }

  _downloadJson() {
    const { meta } = this._selected;
    save(new Blob([JSON.stringify(meta, null, 2)], { type: "application/json" }), `${meta.id}.json`);
  }

  async _delete() {
    const { meta } = this._selected;
    const question = `The recording of ${meta.satellite} from ${formatTime(meta.started, this._dates)} is deleted for good.`;
    if (!(await this._confirm(question))) return;
    this._rowErrors.delete(meta.id);
    try {
      await this._hass.callWS({ type: "voicestack/recordings/delete", recording_id: meta.id });
    } catch (err) {
      // This request's trouble, not the panel's: said on its row and in a toast.
      const message = `Could not delete it: ${err.message ?? err}`;
      this._rowErrors.set(meta.id, message);
      this._renderList();
      this.dispatchEvent(
        new CustomEvent("hass-notification", { detail: { message }, bubbles: true, composed: true }),
      );
    }
  }

  /** Ask in the panel's dialog (styled like Home Assistant's); true for "Delete". */
  _confirm(question) {
    const dialog = this.shadowRoot.querySelector("dialog.confirm");
    dialog.querySelector(".question").textContent = question;
    dialog.returnValue = "";
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "delete"), { once: true });
    });
  }

  _fail(message) {
    this._error = message;
    this._live(false);
    this._selected = null;
    this._showDetails();
  }
}

function button(action, label, text, kind = "") {
  return `<button class="action ${kind}" data-action="${action}" aria-label="${label}"
    title="${label}">${text}</button>`;
}

function save(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

customElements.define("voicestack-debug-panel", VoiceStackDebugPanel);
