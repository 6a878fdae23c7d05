// Pair viewer: the item's clip(s) side by side, synchronised, with the sampled frames on the timeline,
// the texts with their differing words marked, and every run's scores.
// (`el` comes from dom.js, which widgets/assets.py puts before this file.)

function render({ model, el: root }) {
  const box = el("div", "fb-viewer");
  box.tabIndex = 0;
  root.appendChild(box);
  let panel = null;

  function draw() {
    box.innerHTML = "";
    const item = model.get("item");
    const clips = model.get("clips");
    const title = `${item.benchmark || ""} · ${item.subset || ""} · ${item.item_id || "no item"}`;
    box.appendChild(el("div", "fb-title", title));
    const row = el("div", "fb-clips");
    const videos = [];
    let duration = 0;
    clips.forEach((clip, i) => {
      const cell = el("div", "fb-clip");
      cell.appendChild(el("div", "fb-clip-label", `clip ${i}`));
      if (clip.url) {
        const video = el("video", "fb-video");
        video.src = clip.url;
        video.muted = true;
        video.playsInline = true;
        video.preload = "auto";
        video.dataset.clip = String(i);
        video.addEventListener("error", () => {
          const reason = video.error ? video.error.message || `media error ${video.error.code}` : "unknown error";
          video.replaceWith(el("div", "fb-missing", `video could not be played: ${reason}`));
        });
        cell.appendChild(video);
        videos.push(video);
        duration = Math.max(duration, clip.duration || 0);
      } else {
        cell.appendChild(el("div", "fb-missing", `video unavailable: ${clip.error}`));
      }
      const line = el("div", "fb-timeline");
      (clip.sampled || []).forEach((t) => {
        const tick = el("span", "fb-tick");
        tick.style.left = `${Math.min(100, (100 * t) / Math.max(clip.duration || 1, 1e-6))}%`;
        tick.title = `sampled frame at ${t.toFixed(2)} s`;
        line.appendChild(tick);
      });
      cell.appendChild(line);
      row.appendChild(cell);
    });
    box.appendChild(row);

    const controls = el("div", "fb-controls");
    const play = el("button", "fb-play", "play");
    const scrub = el("input", "fb-scrub");
    scrub.type = "range";
    scrub.min = "0";
    scrub.max = String(duration || 1);
    scrub.step = "0.01";
    scrub.value = "0";
    const clock = el("span", "fb-clock", "0.00 s");
    play.onclick = () => {
      const paused = videos.length === 0 || videos[0].paused;
      videos.forEach((v) => (paused ? v.play() : v.pause()));
      play.textContent = paused ? "pause" : "play";
    };
    scrub.oninput = () => videos.forEach((v) => (v.currentTime = Number(scrub.value)));
    if (videos.length) {
      videos[0].addEventListener("timeupdate", () => {
        const t = videos[0].currentTime;
        scrub.value = String(t);
        clock.textContent = `${t.toFixed(2)} s`;
        videos.slice(1).forEach((v) => {
          if (Math.abs(v.currentTime - t) > 0.1) v.currentTime = t;
        });
      });
    }
    controls.append(play, scrub, clock);
    box.appendChild(controls);

    const textList = (entries) => {
      const list = el("ol", "fb-texts");
      list.start = 0;
      entries.forEach((text) => {
        const li = el("li", text.true_of.length ? "fb-text fb-true" : "fb-text fb-false");
        const role = clips.length > 1 && text.true_of.length ? ` (true of clip ${text.true_of.join(", ")})` : "";
        li.appendChild(el("span", "fb-role", `${text.name}${role}: `));
        text.words.forEach(([word, changed]) => {
          li.appendChild(changed ? el("mark", "fb-diff", word) : document.createTextNode(word));
          li.appendChild(document.createTextNode(" "));
        });
        list.appendChild(li);
      });
      return list;
    };
    box.appendChild(textList(model.get("texts")));
    if (model.get("twin").length) {
      box.appendChild(el("div", "fb-twin", "proficiency test"));
      box.appendChild(textList(model.get("twin")));
    }

    const table = el("table", "fb-scores");
    const head = el("tr");
    ["run", "scores and answers", "margin", "correct"].forEach((h) => head.appendChild(el("th", "", h)));
    table.appendChild(head);
    model.get("runs").forEach((run) => {
      const tr = el("tr", "fb-run");
      tr.dataset.run = run.run;
      tr.appendChild(el("td", "", `${run.run} (${run.protocol})`));
      const lines = el("td", "fb-mono fb-lines");
      run.lines.forEach((line) => lines.appendChild(el("div", "fb-line", line)));
      tr.appendChild(lines);
      const margin = el("td", "fb-mono fb-margin", run.margin);
      margin.title = `smallest gap of a right over a wrong ${run.unit || "score"} (positive: every ranking right)`;
      tr.appendChild(margin);
      const verdicts = el("td", "fb-verdicts");
      run.correct.forEach((c) => {
        const mark = c.value === null ? `no score (${c.status})` : c.tie ? "tie" : c.value ? "✓" : "✗";
        const cls = c.value === null ? "fb-none" : c.tie ? "fb-tie" : c.value ? "fb-right" : "fb-wrong";
        const badge = el("span", `fb-verdict ${cls}`, `${c.metric} ${mark}`);
        badge.dataset.metric = c.metric;
        verdicts.appendChild(badge);
      });
      tr.appendChild(verdicts);
      table.appendChild(tr);
    });
    box.appendChild(table);
    panel = whatIfPanel(model);
    box.appendChild(panel.node);
  }

  box.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    if (event.key === "ArrowRight" || event.key === "j") model.send({ event: "next" });
    if (event.key === "ArrowLeft" || event.key === "k") model.send({ event: "previous" });
  });
  ["change:item", "change:clips", "change:texts", "change:twin", "change:runs", "change:whatif"].forEach((name) =>
    model.on(name, draw));
  ["change:probes", "change:probing"].forEach((name) => model.on(name, () => panel && panel.update()));
  draw();
}

export default { render };
