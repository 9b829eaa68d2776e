// The dashboard's own script: times in the viewer's zone, and the spend charts (uPlot). Numbers come drawn from
// the server's read models; nothing here adds up money.
(() => {
  const palette = [
    '#2f5bea',
    '#e4572e',
    '#17bebb',
    '#ffc914',
    '#76b041',
    '#9c51b6',
    '#ef6f6c',
    '#465775',
    '#999',
  ];

  function localTimes(root) {
    for (const el of root.querySelectorAll('time[datetime]')) {
      if (el.dataset.local) continue;
      const at = new Date(el.getAttribute('datetime'));
      if (Number.isNaN(at.getTime())) continue;
      el.title = el.getAttribute('datetime');
      el.textContent = at.toLocaleString();
      el.dataset.local = '1';
    }
  }

  function drawCharts(root) {
    if (typeof uPlot === 'undefined') return;
    for (const el of root.querySelectorAll('[data-chart]')) {
      // htmx settles a swapped element by its id with the old attributes first: look at the content instead.
      if (el.querySelector('.uplot')) continue;
      // The points ride in an attribute: htmx drops <script> elements from the pages it swaps in.
      const data = JSON.parse(el.dataset.points || '{"days":[],"series":[]}');
      const most = Math.max(0, ...data.series.flatMap((s) => s.cents));
      // Under a dollar a day, the axis speaks in cents.
      const dollars = (v) =>
        v == null ? '' : most >= 100 ? `$${(v / 100).toFixed(2)}` : `${Number(v.toPrecision(3))}¢`;
      const opts = {
        width: Math.max(320, el.clientWidth || 800),
        height: 260,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map(dollars), size: 70 }],
        series: [
          { value: (_u, v) => (v == null ? '' : new Date(v * 1000).toLocaleDateString()) },
          ...data.series.map((s, i) => ({
            label: s.label,
            stroke: palette[i % palette.length],
            width: 2,
            points: { show: true, size: 5 },
            value: (_u, v) => dollars(v),
          })),
        ],
      };
      el.dataset.series = String(data.series.length);
      new uPlot(opts, [data.days, ...data.series.map((s) => s.cents)], el);
    }
  }

  function init(root) {
    localTimes(root);
    drawCharts(root);
  }

  document.addEventListener('DOMContentLoaded', () => init(document));
  document.addEventListener('htmx:load', (event) => init(event.detail.elt));
})();
