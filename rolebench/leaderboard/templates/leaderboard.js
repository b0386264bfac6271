// The leaderboard page's behaviour: sortable columns, the split filter, per-role drill-down.
// Inlined into index.html with a CSP hash; builds every element with textContent only.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("roles-data").textContent);
  var ROLES = DATA.rows, METRICS = DATA.metrics;

  function pairs(tbody) {
    var out = [];
    Array.prototype.forEach.call(tbody.querySelectorAll("tr.row"), function (tr) {
      var next = tr.nextElementSibling;
      out.push([tr, next && next.classList.contains("detail") ? next : null]);
    });
    return out;
  }

  function sortTable(th) {
    var table = th.closest("table"), tbody = table.tBodies[0];
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.dataset.type === "num";
    var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" :
              th.getAttribute("aria-sort") === "ascending" ? "descending" : (numeric && index > 0 ? "descending" : "ascending");
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    var sign = dir === "ascending" ? 1 : -1;
    var rows = pairs(tbody);
    rows.sort(function (a, b) {
      var x = a[0].children[index].dataset.sort, y = b[0].children[index].dataset.sort;
      if (x === "" || y === "") { return (x === "") - (y === ""); }
      if (numeric) { return sign * (parseFloat(x) - parseFloat(y)); }
      return sign * x.localeCompare(y);
    });
    rows.forEach(function (p) { tbody.appendChild(p[0]); if (p[1]) { tbody.appendChild(p[1]); } });
  }

  function cell(tag, text) { var el = document.createElement(tag); el.textContent = text; return el; }

  function rolesTable(entry) {
    var table = document.createElement("table"), head = document.createElement("tr");
    table.className = "roles";
    head.appendChild(cell("th", "Role")); head.appendChild(cell("th", "n"));
    METRICS.forEach(function (m) { head.appendChild(cell("th", m.toUpperCase())); });
    table.appendChild(head);
    Object.keys(entry.roles).forEach(function (role) {
      var values = entry.roles[role], tr = document.createElement("tr");
      tr.appendChild(cell("td", role)); tr.appendChild(cell("td", String(values.n)));
      METRICS.forEach(function (m) {
        var v = values[m];
        tr.appendChild(cell("td", typeof v === "number" ? v.toFixed(4) : "–"));
      });
      table.appendChild(tr);
    });
    return table;
  }

  function toggleRoles(button) {
    var tr = button.closest("tr"), next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) {
      next.hidden = !next.hidden;
      button.setAttribute("aria-expanded", String(!next.hidden));
      return;
    }
    var detail = document.createElement("tr"), td = document.createElement("td");
    detail.className = "detail";
    td.colSpan = tr.children.length;
    var entry = ROLES[tr.dataset.key];
    td.appendChild(cell("strong", entry.model + " — " + entry.split + ": scores per role"));
    td.appendChild(rolesTable(entry));
    detail.appendChild(td);
    tr.parentNode.insertBefore(detail, tr.nextSibling);
    button.setAttribute("aria-expanded", "true");
  }

  function applyFilter() {
    var value = document.getElementById("split-filter").value, shown = 0;
    Array.prototype.forEach.call(document.querySelectorAll("section.board"), function (section) {
      section.hidden = value !== "all" && section.dataset.split !== value;
      if (!section.hidden) { shown += section.querySelectorAll("tr.row").length; }
    });
    document.getElementById("visible-count").textContent = shown + " rows shown";
  }

  document.querySelectorAll("table.lb th").forEach(function (th) {
    if (th.dataset.type !== "none") { th.addEventListener("click", function () { sortTable(th); }); }
  });
  document.querySelectorAll("button.roles").forEach(function (b) {
    b.addEventListener("click", function () { toggleRoles(b); });
  });
  document.getElementById("split-filter").addEventListener("change", applyFilter);
  applyFilter();
}());
