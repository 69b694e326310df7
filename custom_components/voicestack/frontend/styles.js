// The panel's look: Home Assistant's theme variables throughout, so it follows
// the user's theme and dark mode like HA's own panels.

export const STYLES = `
:host {
  display: block;
  height: 100%;
  background: var(--primary-background-color);
  color: var(--primary-text-color);
  font-family: var(--ha-font-family-body, var(--paper-font-body1_-_font-family, Roboto, sans-serif));
  font-size: 14px;
  --vs-card: var(--ha-card-background, var(--card-background-color, #fff));
  --vs-radius: var(--ha-card-border-radius, 12px);
  --vs-border: var(--ha-card-border-width, 1px) solid var(--ha-card-border-color, var(--divider-color));
  --vs-wave-background: var(--vs-card);
  --vs-wave-color: var(--primary-color);
  --vs-wave-grid: var(--divider-color);
  --vs-wave-text: var(--secondary-text-color);
  --vs-marker-preroll: var(--grey-color, #9e9e9e);
  --vs-marker-splice: var(--orange-color, #ff9800);
  --vs-marker-wake: var(--red-color, #f44336);
  --vs-marker-speech-start: var(--green-color, #4caf50);
  --vs-marker-speech-end: var(--purple-color, #9c27b0);
  --vs-marker-stream-end: var(--cyan-color, #00bcd4);
}
* { box-sizing: border-box; }
.toolbar {
  display: flex; align-items: center; height: var(--header-height, 56px); padding: 0 12px;
  font-size: 20px; background: var(--app-header-background-color, var(--primary-color));
  color: var(--app-header-text-color, #fff); border-bottom: var(--app-header-border-bottom, none);
  position: sticky; top: 0; z-index: 2;
}
.toolbar .title { margin-inline-start: 12px; flex: 1; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.toolbar .fallback-menu { background: none; border: none; color: inherit; font-size: 22px; width: 48px; height: 48px; cursor: pointer; }
.content { display: flex; gap: 16px; padding: 16px; align-items: flex-start; }
:host([narrow]) .content { flex-direction: column; padding: 8px; gap: 8px; }
.card {
  background: var(--vs-card); border: var(--vs-border); border-radius: var(--vs-radius);
  box-shadow: var(--ha-card-box-shadow, none); padding: 12px 16px; min-width: 0;
}
h2 { font-size: 16px; font-weight: 500; margin: 0 0 8px; display: flex; align-items: center; gap: 8px; }
.list { width: 340px; flex: none; padding: 12px 0 4px; position: sticky; top: 72px; }
:host([narrow]) .list { width: 100%; position: static; }
.list h2 { padding: 0 16px; }
.requests { list-style: none; margin: 0; padding: 0; max-height: calc(100vh - 140px); overflow-y: auto; }
:host([narrow]) .requests { max-height: 40vh; }
.requests button {
  all: unset; box-sizing: border-box; display: grid; grid-template-columns: 1fr auto; gap: 2px 8px;
  width: 100%; padding: 8px 16px; cursor: pointer; border-top: 1px solid var(--divider-color);
}
.requests button:hover { background: var(--secondary-background-color); }
.requests button:focus-visible { outline: 2px solid var(--primary-color); outline-offset: -2px; }
.requests button[aria-current="true"] {
  background: rgba(var(--rgb-primary-color, 3, 169, 244), 0.12); box-shadow: inset 3px 0 var(--primary-color);
}
.requests .text { font-weight: 500; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.requests .sub { color: var(--secondary-text-color); font-size: 12px; }
.requests .chip { justify-self: end; align-self: start; }
.requests .new { animation: arrive 2s ease-out; }
.requests .row-error { grid-column: 1 / -1; color: var(--error-color, #db4437); font-size: 12px; }
@keyframes arrive { from { background: rgba(var(--rgb-primary-color, 3, 169, 244), 0.3); } }
.live { font-size: 11px; font-weight: 500; color: var(--success-color, #4caf50); text-transform: uppercase; letter-spacing: .05em; }
.live::before { content: "● "; }
.live.off { color: var(--secondary-text-color); }
.details { flex: 1; min-width: 0; display: grid; gap: 16px; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); }
:host([narrow]) .details { width: 100%; gap: 8px; grid-template-columns: 1fr; }
.details .wide { grid-column: 1 / -1; }
.muted, .empty { color: var(--secondary-text-color); }
.chip {
  display: inline-block; padding: 2px 8px; border-radius: 12px; font-size: 12px; line-height: 18px;
  background: var(--secondary-background-color); color: var(--primary-text-color); white-space: nowrap;
}
.chip.primary { background: var(--primary-color); color: var(--text-primary-color, #fff); }
.chip.warning { background: var(--warning-color, #ff9800); color: #000; }
.chip.success { background: var(--success-color, #4caf50); color: #fff; }
.chip.error { background: var(--error-color, #db4437); color: #fff; }
.heard { font-size: 18px; margin: 0 0 8px; overflow-wrap: anywhere; }
.controls { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin-bottom: 8px; }
.controls .spacer { flex: 1; }
button.action {
  font: inherit; font-size: 13px; font-weight: 500; min-width: 36px; height: 32px; padding: 0 10px;
  border-radius: 16px; border: 1px solid var(--divider-color); cursor: pointer;
  background: var(--vs-card); color: var(--primary-color);
}
button.action:hover { background: var(--secondary-background-color); }
button.action:focus-visible { outline: 2px solid var(--primary-color); }
button.action.filled { background: var(--primary-color); color: var(--text-primary-color, #fff); border-color: transparent; }
button.action.danger { color: var(--error-color, #db4437); }
button.action.danger.filled { background: var(--error-color, #db4437); color: #fff; }
.wave { position: relative; user-select: none; }
.wave .labels { position: relative; overflow: hidden; }
.wave canvas { display: block; width: 100%; height: 180px; cursor: crosshair; touch-action: none;
  border-radius: 4px; }
.wave .marker {
  position: absolute; font-size: 11px; line-height: 16px; padding: 0 4px;
  white-space: nowrap; border-left: 2px solid var(--marker); color: var(--primary-text-color);
  background: linear-gradient(90deg, color-mix(in srgb, var(--marker) 25%, transparent), transparent);
}
.wave .marker.flip {
  border-left: none; border-right: 2px solid var(--marker);
  background: linear-gradient(270deg, color-mix(in srgb, var(--marker) 25%, transparent), transparent);
}
.wave .cursor, .wave .playhead { position: absolute; bottom: 0; width: 0; height: 180px;
  border-left: 1px dashed var(--primary-text-color); pointer-events: none; }
.wave .playhead { border-left: 2px solid var(--accent-color, #ff9800); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12px; color: var(--secondary-text-color); margin-top: 6px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  background: var(--marker); margin-inline-end: 4px; vertical-align: -1px; }
.tokens { display: flex; flex-wrap: wrap; gap: 4px; }
.token { font-family: var(--ha-font-family-code, monospace); font-size: 13px; padding: 1px 6px; border-radius: 4px;
  background: var(--secondary-background-color); }
.token.special { background: var(--warning-color, #ff9800); color: #000; font-weight: 600; }
.route { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 6px; }
.explain { font-family: var(--ha-font-family-code, monospace); font-size: 12px; background: var(--secondary-background-color);
  padding: 6px 8px; border-radius: 4px; overflow-wrap: anywhere; }
.trace, .trace ul { list-style: none; margin: 0; padding-inline-start: 14px; }
.trace { padding: 0; }
.trace > li { border-left: 2px solid var(--divider-color); padding-left: 8px; margin: 4px 0; }
.trace > li.decided { border-left-color: var(--primary-color); }
.trace .frame { font-weight: 500; }
.trace ul li { color: var(--secondary-text-color); font-size: 13px; }
.trace ul li::before { content: "└ "; }
.timeline { display: grid; gap: 4px; }
.stage { display: grid; grid-template-columns: 56px 1fr 56px; gap: 8px; align-items: center; font-size: 12px; }
.stage .track { position: relative; height: 12px; background: var(--secondary-background-color); border-radius: 6px; }
.stage .bar { position: absolute; top: 0; bottom: 0; border-radius: 6px; background: var(--primary-color); }
.stage .bar.open { background: repeating-linear-gradient(45deg, var(--primary-color) 0 6px, transparent 6px 10px); }
.stage .took { text-align: end; color: var(--secondary-text-color); }
.axis { font-size: 11px; margin: 4px 0 0; }
.sentences { margin: 0; padding-inline-start: 20px; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 0; }
.meta dt { color: var(--secondary-text-color); }
.meta dd { margin: 0; overflow-wrap: anywhere; }
.error { background: var(--error-color, #db4437); color: #fff; padding: 8px 16px; border-radius: var(--vs-radius); }
.placeholder { text-align: center; padding: 48px 16px; }
.stages { list-style: none; margin: 0 0 8px; padding: 0; display: grid; gap: 2px; }
.stages li { display: grid; grid-template-columns: 20px 64px 1fr; gap: 6px; align-items: baseline; font-size: 13px; }
.stages li::before { content: "✓"; color: var(--success-color, #4caf50); font-weight: 600; }
.stages li.failed::before { content: "✗"; color: var(--error-color, #db4437); }
.stages li.skipped::before { content: "–"; color: var(--secondary-text-color); }
.stages li.failed .what { color: var(--error-color, #db4437); }
.stages li.skipped { color: var(--secondary-text-color); }
.stages .name { font-family: var(--ha-font-family-code, monospace); }
.stages .what { overflow-wrap: anywhere; }
dialog.confirm {
  border: none; border-radius: var(--ha-dialog-border-radius, 28px); padding: 24px; min-width: min(320px, 90vw);
  max-width: 90vw; background: var(--mdc-theme-surface, var(--vs-card)); color: var(--primary-text-color);
  box-shadow: var(--ha-card-box-shadow, 0 8px 32px rgba(0, 0, 0, 0.3));
}
dialog.confirm::backdrop { background: var(--mdc-dialog-scrim-color, rgba(0, 0, 0, 0.32)); }
dialog.confirm h2 { font-size: 22px; font-weight: 400; margin: 0 0 16px; }
dialog.confirm p { margin: 0 0 24px; color: var(--secondary-text-color); }
dialog.confirm .buttons { display: flex; justify-content: flex-end; gap: 8px; }
`;
