export interface Point {
  start: string;
  attempts: number;
  succeeded: number;
  failed: number;
  pending: number;
}

/**
 * A small stacked bar chart of attempts over time (succeeded, retried, failed), in SVG; the same
 * figures are in a table for screen readers.
 */
export function AttemptsChart({ points, label }: { points: Point[]; label: string }) {
  const width = 480;
  const height = 96;
  const max = Math.max(1, ...points.map((point) => point.attempts));
  const bar = width / Math.max(1, points.length);
  const y = (n: number) => (n / max) * (height - 4);
  const hour = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${label}: ${points.reduce((sum, point) => sum + point.attempts, 0)} attempts`}
        preserveAspectRatio="none"
      >
        <line x1="0" x2={width} y1={height - 0.5} y2={height - 0.5} class="axis" />
        {points.map((point, i) => {
          let top = height;
          return (
            <g key={point.start}>
              <title>{`${hour(point.start)}: ${point.attempts} attempts, ${point.succeeded} succeeded, ${point.pending} retried, ${point.failed} failed`}</title>
              {(["succeeded", "pending", "failed"] as const).map((part) => {
                const h = y(point[part]);
                top -= h;
                return h > 0 ? <rect class={`bar ${part}`} x={i * bar + 1} y={top} width={Math.max(1, bar - 2)} height={h} /> : null;
              })}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span>{points[0] ? hour(points[0].start) : ""}</span>
        <span class="legend">
          <i class="key succeeded" /> succeeded <i class="key pending" /> retried <i class="key failed" /> failed
        </span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}

/** A point of the lag chart: its step's p95 lag, null when nothing succeeded in it. */
export interface LagPoint {
  start: string;
  p95_lag_ms: number | null;
}

/**
 * The p95 lag of each step as bars (the lag a receiver felt: from the change's commit to its
 * delivery's first 2xx), in SVG; a step where nothing succeeded has none.
 */
export function LagChart({ points, label }: { points: LagPoint[]; label: string }) {
  const width = 480;
  const height = 64;
  const measured = points.filter((point) => point.p95_lag_ms !== null).map((point) => point.p95_lag_ms!);
  const max = Math.max(1, ...measured);
  const bar = width / Math.max(1, points.length);
  const hour = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const summary = measured.length === 0 ? "nothing succeeded" : `highest p95 lag ${max.toLocaleString()} ms`;
  return (
    <figure class="chart lag">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${label}: ${summary}`} preserveAspectRatio="none">
        <line x1="0" x2={width} y1={height - 0.5} y2={height - 0.5} class="axis" />
        {points.map((point, i) =>
          point.p95_lag_ms === null ? null : (
            <g key={point.start}>
              <title>{`${hour(point.start)}: p95 lag ${point.p95_lag_ms.toLocaleString()} ms`}</title>
              <rect
                class="bar lag"
                x={i * bar + 1}
                y={height - Math.max(1, (point.p95_lag_ms / max) * (height - 4))}
                width={Math.max(1, bar - 2)}
                height={Math.max(1, (point.p95_lag_ms / max) * (height - 4))}
              />
            </g>
          ),
        )}
      </svg>
      <figcaption>
        <span>{points[0] ? hour(points[0].start) : ""}</span>
        <span class="legend">
          <i class="key lag" /> p95 lag (commit to first 2xx)
        </span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}
