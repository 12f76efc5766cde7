// The dashboard's only script of its own (served from 'self', so the CSP needs no inline script).
(function () {
  var csrf = document.body.getAttribute('data-csrf');
  // htmx requests carry the session's CSRF token as a header as well (forms also carry it as a field).
  document.body.addEventListener('htmx:configRequest', function (event) {
    if (csrf) event.detail.headers['X-CSRF-Token'] = csrf;
  });
  function drawCharts() {
    if (typeof Chart === 'undefined') return;
    document.querySelectorAll('canvas[data-chart]').forEach(function (canvas) {
      if (canvas.getAttribute('data-drawn')) return;
      var source = document.getElementById(canvas.getAttribute('data-chart'));
      if (!source) return;
      var spec = JSON.parse(source.textContent);
      canvas.setAttribute('data-drawn', '1');
      new Chart(canvas, {
        type: spec.type || 'bar',
        data: { labels: spec.labels, datasets: spec.datasets },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          plugins: { legend: { position: 'bottom' } },
          scales: { y: { beginAtZero: true } },
        },
      });
    });
  }
  // Copy buttons: the input they name, to the clipboard; without a script the input's text is there to select.
  document.body.addEventListener('click', function (event) {
    var button = event.target.closest?.('button[data-copy]');
    if (!button) return;
    var input = document.getElementById(button.getAttribute('data-copy'));
    if (!input) return;
    input.select();
    var done = function () {
      button.textContent = button.getAttribute('data-copied');
    };
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () {});
    else if (document.execCommand('copy')) done();
  });
  drawCharts();
  document.body.addEventListener('htmx:afterSettle', drawCharts);
})();
