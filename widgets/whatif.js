// The pair viewer's "what if" panel: edit the texts or add a foil, pick a control and the models, re-score; each
// model's new scores show beside the stored ones as it answers. (`el` comes from dom.js.)

function whatIfPanel(model) {
  const state = model.get("whatif") || {};
  const node = el("div", "fb-whatif");
  node.appendChild(el("div", "fb-whatif-title", "What if…"));
  const inputs = el("div", "fb-whatif-texts");
  const addText = (value, name) => {
    const row = el("div", "fb-whatif-row");
    row.appendChild(el("span", "fb-role", `${name}: `));
    const input = el("input", "fb-whatif-text");
    input.type = "text";
    input.value = value;
    row.appendChild(input);
    inputs.appendChild(row);
    return input;
  };
  model.get("texts").forEach((text) => addText(text.text || "", text.name));
  node.appendChild(inputs);

  const controls = el("div", "fb-whatif-controls");
  const add = el("button", "fb-whatif-add", "add a foil");
  add.onclick = () => addText("", "new foil").focus();
  const control = el("select", "fb-whatif-control");
  (state.controls || []).forEach((name) => control.appendChild(el("option", "", name)));
  const clip = el("select", "fb-whatif-clip");
  model.get("clips").forEach((_, i) => {
    const option = el("option", "", `clip ${i}`);
    option.value = String(i);
    clip.appendChild(option);
  });
  controls.append(add, el("span", "", "control "), control);
  if (model.get("clips").length > 1) controls.append(el("span", "", " of "), clip);
  node.appendChild(controls);

  const picks = el("div", "fb-whatif-models");
  (state.targets || []).forEach((target) => {
    const label = el("label", "fb-whatif-model");
    const box = el("input");
    box.type = "checkbox";
    box.value = target.label;
    box.checked = !target.note;
    box.dataset.target = target.label;
    label.append(box, document.createTextNode(` ${target.label}`));
    if (target.note) {
      label.title = target.note;
      label.appendChild(el("span", "fb-none", ` (${target.note})`));
    }
    picks.appendChild(label);
  });
  node.appendChild(picks);
  const go = el("button", "fb-whatif-go", "re-score");
  const status = el("span", "fb-whatif-status");
  go.onclick = () => {
    const texts = [...inputs.querySelectorAll("input")].map((i) => i.value);
    const targets = [...picks.querySelectorAll("input:checked")].map((b) => b.value);
    model.send({ event: "probe", texts, control: control.value, targets, clip: Number(clip.value || 0) });
  };
  node.append(go, status);
  const results = el("div", "fb-whatif-results");
  node.appendChild(results);

  function update() {
    status.textContent = model.get("probing") || "";
    results.innerHTML = "";
    const rows = model.get("probes") || [];
    if (!rows.length) return;
    const table = el("table", "fb-scores fb-probes");
    const head = el("tr");
    head.appendChild(el("th", "", "text"));
    rows.forEach((row) => head.appendChild(el("th", "", `${row.target} (${row.control})`)));
    table.appendChild(head);
    rows[0].texts.forEach((text, t) => {
      const tr = el("tr");
      tr.appendChild(el("td", "", text));
      rows.forEach((row) => {
        const td = el("td", "fb-mono fb-probe-score");
        td.dataset.target = row.target;
        td.dataset.text = String(t);
        if (row.error) {
          td.classList.add("fb-wrong");
          td.textContent = t === 0 ? row.error : "";
        } else {
          const best = row.scores.indexOf(Math.max(...row.scores));
          td.appendChild(el(t === best ? "b" : "span", "fb-probe-new", row.scores[t].toFixed(4)));
          const stored = row.stored[t];
          td.appendChild(el("span", "fb-none", stored === null ? " (new text)" : ` (stored ${stored.toFixed(4)})`));
        }
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    results.appendChild(table);
  }
  update();
  return { node, update };
}

