// Did the request work, and if not, where did it fail? The result chip, the
// stages a request goes through (named as in Home Assistant's own pipeline
// debug view: wake, stt, intent, tts, playback) and what the conversation
// agent answered. Pure functions of the metadata, every value escaped.

import { escape } from "./details.js";

const CHIP = { success: "success", failure: "error", empty: "warning" };
const STAGES = ["wake", "stt", "intent", "tts", "playback"];
// Recordings made before schema version 2 have no result: read their outcome.
const FROM_OUTCOME = { empty: "empty", no_speech: "empty", failed: "failure", cancelled: "failure" };

/** success, failure or empty; an older recording's outcome when it has none. */
export function resultOf(recording) {
  return recording.result ?? FROM_OUTCOME[recording.outcome] ?? recording.outcome ?? "";
}

/** The chip of a request's result (in the list and above the waveform). */
export function resultChip(recording) {
  const result = resultOf(recording);
  return `<span class="chip result ${CHIP[result] ?? ""}" data-result="${escape(result)}">${escape(result)}</span>`;
}

/** The stages, one line each, the failed one with its code and message. */
export function stagesHtml(meta) {
  const failure = meta.failure ?? null;
  const failedAt = failure ? STAGES.indexOf(failure.stage) : -1;
  const rows = STAGES.map((stage, index) => {
    let state = "done";
    let text = stageSummary(stage, meta);
    if (index === failedAt) {
      state = "failed";
      text = [failure.code, failure.message].filter(Boolean).join(": ") || "failed";
    } else if (text === null) {
      // After a failure: never reached (an agent's error is still said).
      state = "skipped";
      text = failedAt >= 0 && index > failedAt ? "not reached" : "—";
    }
    return `<li class="${state}" data-stage="${stage}" data-state="${state}">
        <span class="name">${stage}</span><span class="what">${escape(text)}</span></li>`;
  });
  return `<ol class="stages" aria-label="stages">${rows.join("")}</ol>`;
}

/** What each stage did, in a few words (null: it did not run). */
function stageSummary(stage, meta) {
  switch (stage) {
    case "wake":
      return meta.wake_word ? meta.wake_word.name ?? "woken" : "no wake word (a follow-up or a window)";
    case "stt":
      if (!meta.stt) return meta.result === "empty" ? "nobody spoke" : null;
      return meta.text ? `“${meta.stt.raw.trim()}”` : "no words";
    case "intent":
      if (meta.agent) return meta.agent.intent ?? meta.agent.response_type;
      return meta.decision ? `${meta.decision.frame} / ${meta.decision.rule}` : null;
    case "tts":
      return meta.response ? "said" : null;
    case "playback":
      return meta.playback?.outcome ?? null;
    default:
      return null;
  }
}

/** The conversation agent's answer: type, error, intent, targets, action. */
export function agentHtml(agent, decision) {
  if (!agent) {
    const why = decision
      ? "Not asked: the router handled the request."
      : "Not asked: the request never reached the router.";
    return `<p class="muted agent-none">${why}</p>`;
  }
  const targets = (list) =>
    list?.length ? list.map((t) => `${t.name} (${t.type})`).join(", ") : "none";
  const rows = [
    ["Response type", agent.response_type],
    ["Error code", agent.error_code ?? "none"],
    ["Intent", agent.intent ?? (agent.error_code ? `none (${agent.error_code})` : "not told")],
    ["Targets", targets(agent.targets)],
    ...(agent.failed_targets?.length ? [["Failed targets", targets(agent.failed_targets)]] : []),
    ["Action ran", agent.acted ? "yes" : "no"],
  ];
  return `<dl class="meta agent">${rows
    .map(([key, value]) => `<dt>${key}</dt><dd data-field="${escape(key)}">${escape(value)}</dd>`)
    .join("")}</dl>`;
}
