// Item list: a scrollable table; a click on a row selects its item, a click on a column title sorts by it
// (the kernel sorts and sends the rows back).
// (`el` comes from dom.js, which widgets/assets.py puts before this file.)

function render({ model, el: root }) {
  const box = el("div", "fb-list");
  root.appendChild(box);

  function header() {
    const head = el("thead");
    const columns = model.get("columns");
    const [sortKey, descending] = model.get("sort");
    const groups = el("tr", "fb-groups");
    let last = null;
    columns.forEach((column) => {
      if (last && last.group === column.group) {
        last.cell.colSpan += 1;
      } else {
        const cell = el("th", "fb-group", column.group || "");
        groups.appendChild(cell);
        last = { group: column.group, cell };
      }
    });
    const titles = el("tr");
    columns.forEach((column) => {
      const arrow = column.key === sortKey ? (descending ? " ▼" : " ▲") : "";
      const th = el("th", "fb-sortable", column.title + arrow);
      th.dataset.key = column.key;
      th.title = "sort by this column (click again to reverse)";
      th.onclick = () => {
        model.set("sort", [column.key, column.key === sortKey ? !descending : false]);
        model.save_changes();
      };
      titles.appendChild(th);
    });
    head.append(groups, titles);
    return head;
  }

  function mark() {
    const selected = model.get("selected");
    box.querySelectorAll("tr.fb-row").forEach((tr) => {
      const on = tr.dataset.id === selected;
      tr.classList.toggle("fb-selected", on);
      if (on) tr.scrollIntoView({ block: "nearest" });
    });
  }

  function draw() {
    box.innerHTML = "";
    const table = el("table", "fb-items");
    table.appendChild(header());
    const kinds = model.get("columns").map((c) => c.kind);
    const body = el("tbody");
    model.get("rows").forEach((row) => {
      const tr = el("tr", "fb-row");
      tr.dataset.id = row.id;
      row.cells.forEach((value, i) => {
        const kind = kinds[i] || "text";
        const marks = { "✓": "fb-right", "✗": "fb-wrong", tie: "fb-tie" };
        const mark = marks[value] || "fb-none";
        const cls = kind === "correct" ? mark : `fb-${kind}`;
        tr.appendChild(el("td", cls, value));
      });
      tr.onclick = () => {
        model.set("selected", row.id);
        model.save_changes();
      };
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
    mark();
  }

  model.on("change:rows", draw);
  model.on("change:columns", draw);
  model.on("change:sort", draw);
  model.on("change:selected", mark);
  draw();
}

export default { render };
