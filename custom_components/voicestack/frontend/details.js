// What a recording says besides its audio, as HTML: the raw speech-to-text
// tokens, the router's decision, the timings, the playback and the metadata.
// Pure functions of the metadata (schema version 1), every value escaped.

// Special tokens speech-to-text writes ([BLANK_AUDIO], (music), <|nospeech|>,
// *sigh*, ♪): the same shapes core/recording.py keeps whole.
const SPECIAL = /^(\[[^\]]*\]|\([^)]*\)|<\|[^>]*\|>|\*[^*]*\*|[♪♫]+)$/;

export function escape(value) {
  return String(value ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

const seconds = (value, digits = 2) =>
  value === null || value === undefined ? "—" : `${Number(value).toFixed(digits)} s`;

/**
 * The user's date and time format, as Home Assistant's own panels show a time
 * (its formatDateTimeWithSeconds): the profile's language, 12 or 24 hours
 * (`time_format`), and the server's time zone if the profile says so.
 */
export function dateFormat(hass) {
  const locale = hass?.locale ?? {};
  const language = locale.language || hass?.language || undefined;
  const amPm = usesAmPm(locale.time_format, language);
  const options = {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: amPm ? "numeric" : "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: amPm ? "h12" : "h23",
    timeZone: locale.time_zone === "server" ? hass?.config?.time_zone : undefined,
  };
  try {
    return new Intl.DateTimeFormat(language, options);
  } catch {
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone: undefined });
  }
}

/** Home Assistant's rule: "12", "24", or what the language (or system) uses. */
function usesAmPm(timeFormat, language) {
  if (timeFormat === "12") return true;
  if (timeFormat === "24") return false;
  const test = new Date("January 1, 2023 22:00:00").toLocaleString(
    timeFormat === "system" ? undefined : language,
  );
  return test.includes("10");
}

/** ``iso`` in ``format`` (from dateFormat), escaped. */
export function formatTime(iso, format) {
  const date = new Date(iso);
  return escape(Number.isNaN(date.getTime()) ? iso : (format ?? dateFormat(null)).format(date));
}

export function tokensHtml(stt) {
  const tokens = stt?.tokens ?? [];
  if (!tokens.length) return `<p class="muted">Speech-to-text returned nothing.</p>`;
  const chips = tokens.map((token) =>
    SPECIAL.test(token)
      ? `<span class="token special" title="special token">${escape(token)}</span>`
      : `<span class="token">${escape(token)}</span>`,
  );
  return `<div class="tokens" aria-label="raw tokens">${chips.join("")}</div>`;
}

/** The decision: frame and rule, why, and the trace grouped by frame. */
export function decisionHtml(decision) {
  if (!decision) return `<p class="muted">The router never saw this request.</p>`;
  const frames = [];
  for (const line of decision.trace ?? []) {
    const cut = line.indexOf(": ");
    const frame = cut < 0 ? "" : line.slice(0, cut);
    const verdict = cut < 0 ? line : line.slice(cut + 2);
    const last = frames.at(-1);
    if (last && last.frame === frame) last.verdicts.push(verdict);
    else frames.push({ frame, verdicts: [verdict] });
  }
  const tree = frames
    .map(
      ({ frame, verdicts }) => `<li class="${frame === decision.frame ? "decided" : ""}">
        <span class="frame">${escape(frame || "—")}</span>
        <ul>${verdicts.map((v) => `<li>${escape(v)}</li>`).join("")}</ul></li>`,
    )
    .join("");
  return `<div class="route">
      <span class="chip primary">${escape(decision.frame)} / ${escape(decision.rule)}</span>
      <span class="chip">${decision.sent_to_agent ? "sent to the agent" : "not sent to the agent"}</span>
    </div>
    <p class="explain">${escape(decision.explain)}</p>
    ${decision.reason ? `<p><span class="muted">Reason:</span> ${escape(decision.reason)}</p>` : ""}
    ${decision.stack?.length ? `<p><span class="muted">Mode stack after:</span> ${decision.stack.map(escape).join(" › ")}</p>` : ""}
    ${tree ? `<ul class="trace" aria-label="trace">${tree}</ul>` : ""}`;
}

/** The stages as bars on one time axis (seconds from the request's start). */
export function timingsHtml(timings) {
  if (!timings?.length) return `<p class="muted">No timings.</p>`;
  const ends = timings.map((t) => t.end_s ?? t.start_s);
  const total = Math.max(...ends, ...timings.map((t) => t.start_s), 0.001);
  const rows = timings.map((t) => {
    const left = (t.start_s / total) * 100;
    const open = t.end_s === null || t.end_s === undefined;
    const width = open ? 100 - left : ((t.end_s - t.start_s) / total) * 100;
    const took = open ? "open" : seconds(t.end_s - t.start_s);
    return `<div class="stage" data-stage="${escape(t.stage)}">
        <span class="name">${escape(t.stage)}</span>
        <span class="track"><span class="bar${open ? " open" : ""}"
          style="left:${left}%;width:${Math.max(width, 0.5)}%"
          title="${escape(t.stage)}: ${seconds(t.start_s)} → ${seconds(t.end_s)}"></span></span>
        <span class="took">${took}</span></div>`;
  });
  return `<div class="timeline" role="list">${rows.join("")}</div>
    <p class="muted axis">0 s → ${seconds(total)} after the request started</p>`;
}

export function playbackHtml(playback, response) {
  if (!playback) return `<p class="muted">Nothing was said back.</p>`;
  const sentences = (playback.sentences ?? [])
    .map((s) => `<li><span class="muted">${seconds(s.start_s)} · ${seconds(s.duration_s)}</span> ${escape(s.text)}</li>`)
    .join("");
  return `<p>${escape(response)} <span class="chip">${escape(playback.outcome)}</span></p>
    <ol class="sentences">${sentences}</ol>`;
}

export function metadataHtml(meta, format) {
  const rate = meta.rate || 16000;
  const preroll = meta.preroll
    ? `${meta.preroll.samples} samples (${seconds(meta.preroll.samples / rate, 3)}), cut at ${meta.preroll.cut}`
    : "none (the satellite sent no preroll)";
  const wake = meta.wake_word
    ? `${meta.wake_word.name} (detected at ${seconds(meta.wake_word.detected_s)})`
    : "none";
  const rows = [
    ["Satellite", `${meta.satellite} (${meta.entity_id ?? "no entity"})`],
    ["Started", formatTime(meta.started, format)],
    ["Wake word", wake],
    ["Preroll", preroll],
    ["End of speech", meta.end_of_speech ?? "unknown"],
    ["Duration", `${seconds(meta.duration_s, 3)} (${meta.samples} samples at ${rate} Hz)`],
    ["Speech-to-text", meta.stt?.engine ?? "—"],
    ["Outcome", meta.outcome],
    ["Result", meta.result ?? "—"],
    ["Size", `${((meta.bytes ?? 0) / 1024).toFixed(1)} KiB`],
    ["Recording", meta.id],
  ];
  return `<dl class="meta">${rows
    .map(([key, value]) =>
      key === "Started"
        ? `<dt>${key}</dt><dd class="started">${value}</dd>`
        : `<dt>${key}</dt><dd>${escape(value)}</dd>`,
    )
    .join("")}</dl>`;
}
