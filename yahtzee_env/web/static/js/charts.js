// Charts as SVG, with axes: the statistics' scores, the review's expected totals and a
// profile's rating.

const SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// A line chart: `series` [{points: [y...], color, label}], x from 0; axes with ticks and titles.
// `floor`: the y axis starts at the ticks' step below the lowest point, not at 0 (ratings).
export function lineChart({ series, xLabel, yLabel, aria, xFrom = 1, dots = null, id = "", floor = false }) {
  // drawn at the width it is shown at, so that its labels keep their size on a phone
  const room = document.querySelector("main").clientWidth - 24;
  const w = Math.round(Math.min(760, Math.max(300, room))), h = w < 500 ? 220 : 260;
  const left = 52, right = 14, top = 14, bottom = 44;
  const n = Math.max(...series.map((s) => s.points.length), 1);
  const all = series.flatMap((s) => s.points);
  const lowest = floor && all.length ? Math.floor(Math.min(...all) / 50) * 50 - 50 : 0;
  const max = Math.max(lowest + 50, Math.ceil(Math.max(...all, 0) / 50) * 50);
  const x = (i) => left + (n > 1 ? i * (w - left - right) / (n - 1) : (w - left - right) / 2);
  const y = (v) => h - bottom - (v - lowest) * (h - top - bottom) / (max - lowest);
  const svg = svgEl("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart", role: "img", "aria-label": aria });
  if (id) svg.setAttribute("id", id);
  const step = max - lowest > 200 ? 100 : 50;
  for (let v = lowest; v <= max; v += step) {
    svg.append(svgEl("line", { x1: left, x2: w - right, y1: y(v), y2: y(v), class: "grid" }));
    svg.append(svgEl("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v));
  }
  svg.append(svgEl("line", { x1: left, x2: left, y1: top, y2: h - bottom, class: "axis" }));
  svg.append(svgEl("line", { x1: left, x2: w - right, y1: h - bottom, y2: h - bottom, class: "axis" }));
  const every = Math.max(1, Math.ceil(n / Math.max(4, Math.floor((w - left) / 40))));
  for (let i = 0; i < n; i += every) {
    svg.append(svgEl("line", { x1: x(i), x2: x(i), y1: h - bottom, y2: h - bottom + 4, class: "axis" }));
    svg.append(svgEl("text", { x: x(i), y: h - bottom + 16, "text-anchor": "middle" }, i + xFrom));
  }
  svg.append(svgEl("text", { x: (left + w - right) / 2, y: h - 6, "text-anchor": "middle" }, xLabel));
  svg.append(svgEl("text", { x: 14, y: (top + h - bottom) / 2, "text-anchor": "middle",
    transform: `rotate(-90 14 ${(top + h - bottom) / 2})` }, yLabel));
  for (const s of series) {
    svg.append(svgEl("polyline", { points: s.points.map((v, i) => `${x(i)},${y(v)}`).join(" "),
      fill: "none", stroke: s.color, "stroke-width": 2.5 }));
    s.points.forEach((v, i) => {
      const color = dots ? dots(i) : s.color;
      const dot = svgEl("circle", { cx: x(i), cy: y(v), r: dots ? 4.5 : 3, fill: color });
      dot.append(svgEl("title", {}, `${s.label ? s.label + ": " : ""}${v}`));
      svg.append(dot);
    });
  }
  return svg;
}
export const OUTCOME_COLOR = { win: "#14603d", draw: "#a87c00", loss: "#b00d27" };
export const SEAT_COLOR = ["#14603d", "#b00d27", "#a87c00", "#2457c5"];
