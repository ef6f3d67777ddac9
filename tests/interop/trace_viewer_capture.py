#!/usr/bin/env python3
"""Opens a catapult trace viewer page (`trace2html` output) in headless Chromium, waits for its import, prints what
the viewer built from the trace and saves a screenshot.

  trace_viewer_capture.py --chromium BIN --html PAGE.html --png OUT.png [--export TRACE.json] [--width W --height H]

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: it reads commands on fd 3 and
writes replies on fd 4, each a JSON object ended by a NUL byte), so nothing but Python's standard library is needed.
The page is trace2html's: it imports the embedded trace into a `tr.Model` and hands it to the global
`g_timelineViewEl`, or shows an overlay titled "Import error". What is read back: the model's import warnings, its
processes, threads, slices, flow events and counters, the names of the tracks, and any error overlay.

With --export (the Chrome-trace JSON the page was made from), the viewer's model is also compared with the file:
as many slices as "X" events, as many flow events as "s"/"f" pairs, a process per pid, a thread per (pid, tid) that
holds a slice.

Prints one JSON object on stdout. Exit codes: 0 imported with no error and no warning (and, with --export, the model
holds what the file does), 1 otherwise or when the page never finished, 2 usage error.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time

# Run in the page once its import finished: the figures the viewer shows, from its own model.
SUMMARY_JS = r"""
(() => {
  const overlays = Array.from(document.querySelectorAll('tr-ui-b-overlay'))
      .filter(o => o.visible).map(o => ({title: o.title, text: o.textContent.trim().slice(0, 500)}));
  // trace2html.html declares it with `let`: a global, but not a property of window.
  const view = typeof g_timelineViewEl === "undefined" ? undefined : g_timelineViewEl;
  const m = view && view.model;
  if (!m) return {done: false, overlays};
  const threads = [];
  let slices = 0;
  for (const p of Object.values(m.processes)) {
    for (const t of Object.values(p.threads)) {
      threads.push({process: p.userFriendlyName, thread: t.userFriendlyName, slices: t.sliceGroup.length});
      slices += t.sliceGroup.length;
    }
  }
  let counters = 0;
  for (const p of Object.values(m.processes)) counters += Object.keys(p.counters).length;
  return {
    done: true,
    overlays,
    import_warnings: m.importWarnings.map(w => w.type + ': ' + w.message),
    processes: Object.values(m.processes).map(p => p.userFriendlyName),
    threads,
    slices,
    flow_events: m.flowEvents.length,
    counters,
    bounds_ms: [m.bounds.min, m.bounds.max],
  };
})()
"""

# Before the screenshot: draw the launch flows (the viewer draws the categories ticked under "Flow events", none by
# default); with --zoom-ms, show only that time range (ms from the trace's start), as timeline_track_view.html's
# setInitialViewport_ sets the first one; with --select, select a slice as a click on it would.
SHOW_JS = r"""
((zoom, select) => {
  const v = typeof g_timelineViewEl === "undefined" ? undefined : g_timelineViewEl;
  if (!v || !v.trackView) return false;
  v.selectedFlowEvents.add("ac2g");
  const vp = v.trackView.viewport;
  if (zoom) {
    const container = v.trackView.modelTrackContainer_;
    const t = new tr.ui.TimelineDisplayTransform();
    t.set(vp.currentDisplayTransform);
    t.xSetWorldBounds(v.model.bounds.min + zoom[0], v.model.bounds.min + zoom[1], container.canvas.width);
    vp.setDisplayTransformImmediately(t);
  }
  if (select) {  // the first slice in view whose name starts so: its args show in the panel below the tracks
    const [from, to] = zoom ? [v.model.bounds.min + zoom[0], v.model.bounds.min + zoom[1]] : [-Infinity, Infinity];
    for (const event of v.model.getDescendantEvents()) {
      if (event.title && event.title.startsWith(select) && event.start >= from && event.start < to) {
        v.brushingStateController.changeSelectionFromTimeline(new tr.model.EventSet([event]));
        break;
      }
    }
  }
  vp.dispatchChangeEvent();
  return true;
})(%s, %s)
"""


class DevTools:
    """DevTools protocol client over Chromium's --remote-debugging-pipe."""

    def __init__(self, chromium, width, height, user_dir):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium expects its end of the pipes as fds 3 (commands in) and 4 (replies out). Set in the child after
        # fork; close_fds would close them again after preexec_fn, so it is off (our other fds are not inheritable).
        def child_fds():
            commands, replies = os.dup(to_chrome_r), os.dup(from_chrome_w)  # neither may be 3 or 4 when moved there
            os.dup2(commands, 3)
            os.dup2(replies, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
             f"--user-data-dir={user_dir}", f"--window-size={width},{height}", "--remote-debugging-pipe",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(user_dir, "chromium.log"), "wb"),
            preexec_fn=child_fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0

    def _read_message(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        command = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self.to_chrome, json.dumps(command).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, session, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def capture(tools, args):
    """Loads the page, waits for the viewer's import, returns its summary and writes the screenshot."""
    target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    tools.call("Emulation.setDeviceMetricsOverride",
               {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False}, session)
    tools.call("Page.navigate", {"url": "file://" + os.path.abspath(args.html)}, session)
    deadline = time.monotonic() + args.timeout
    summary = {"done": False}
    while time.monotonic() < deadline:
        summary = tools.evaluate(session, SUMMARY_JS) or {"done": False}
        if summary.get("done") or summary.get("overlays"):
            break
        time.sleep(0.5)
    if summary.get("done"):
        tools.evaluate(session, SHOW_JS % (json.dumps(args.zoom_ms), json.dumps(args.select)))
        time.sleep(2)  # let the view draw the flows
    shot = tools.call("Page.captureScreenshot", {"format": "png"}, session)
    with open(args.png, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    return summary


def expected_from_export(path):
    """What the viewer's model must hold for the export at path: counted from the file itself."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    return {
        "slices": len(slices),
        "flow_events": sum(1 for e in events if e.get("ph") == "s"),
        "processes": len({e["pid"] for e in events if e.get("ph") != "M" or e.get("name") == "process_name"}),
        "threads_with_slices": len({(e["pid"], e["tid"]) for e in slices}),
    }


def compare_with_export(summary, path):
    """The differences between the viewer's model and the export's events, as lines."""
    want = expected_from_export(path)
    got = {
        "slices": summary["slices"],
        "flow_events": summary["flow_events"],
        "processes": len(summary["processes"]),
        "threads_with_slices": sum(1 for t in summary["threads"] if t["slices"] > 0),
    }
    return [f"{key}: the viewer has {got[key]}, the file {want[key]}" for key in want if got[key] != want[key]]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--html", required=True, help="trace2html output")
    p.add_argument("--png", required=True, help="screenshot to write")
    p.add_argument("--export", help="the Chrome-trace JSON the page holds, to compare the viewer's model with")
    p.add_argument("--zoom-ms", type=lambda a: [float(x) for x in a.split(":")], help="A:B, ms from the start")
    p.add_argument("--select", help="select the first slice (in the zoomed range) whose name starts so")
    p.add_argument("--width", type=int, default=1600)
    p.add_argument("--height", type=int, default=1000)
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for the import")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(args.html):
        print(f"trace_viewer_capture: no such page: {args.html}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="fp8scope-viewer-") as user_dir:
        tools = DevTools(args.chromium, args.width, args.height, user_dir)
        try:
            summary = capture(tools, args)
        except (RuntimeError, OSError) as e:
            with open(os.path.join(user_dir, "chromium.log"), errors="replace") as log:
                tail = [line for line in log.read().splitlines() if "dbus" not in line][-5:]
            print(f"trace_viewer_capture: {e}; Chromium's last lines:", *tail, sep="\n  ", file=sys.stderr)
            return 1
        finally:
            tools.close()

    if summary.get("done") and args.export:
        summary["differences_from_export"] = compare_with_export(summary, args.export)
    threads = summary.pop("threads", [])
    summary["threads"] = len(threads)
    summary["thread_names"] = sorted({f"{t['process']} / {t['thread']}" for t in threads})[:40]
    print(json.dumps(summary, indent=1))
    ok = (summary.get("done") and not summary.get("overlays") and not summary.get("import_warnings")
          and not summary.get("differences_from_export"))
    if not summary.get("done"):
        print("trace_viewer_capture: the viewer did not finish importing the trace in time", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
