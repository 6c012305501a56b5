/** Formatting shared by every layer that prints (CLI progress, cloud status lines). Pure. */

/** `m:ss` or `h:mm:ss`; `?` when unknown (never 0:00). */
export function formatDuration(sec: number | null): string {
  if (sec === null || !Number.isFinite(sec)) return '?';
  const s = Math.max(0, Math.round(sec));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}`
    : `${m}:${String(r).padStart(2, '0')}`;
}
