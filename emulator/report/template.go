package report

import (
	"html/template"
	"strconv"

	"github.com/tetris-hil/tetris-hil/internal/units"
)

var funcs = template.FuncMap{
	"ms":    func(s float64) string { return strconv.FormatFloat(s*1e3, 'f', 4, 64) },
	"ratio": func(a, b float64) string { return ratioString(a, b) },
	"num": func(x float64) string {
		if x == 0 {
			return "–"
		}
		return strconv.FormatFloat(x, 'f', 3, 64)
	},
	"bw":   units.FormatBandwidth,
	"secs": units.FormatSeconds,
}

func ratioString(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return strconv.FormatFloat(a/b, 'f', 3, 64)
}

// The page uses system fonts only (no web fonts to fetch) and no script.
var tmpl = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tetris-hil report: {{.Dir}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 1300px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: .25em .7em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; background: #fff; }
figcaption { font-size: .9em; color: #555; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 1em; }
.note { color: #555; }
</style>
</head>
<body>
<h1>tetris-hil report</h1>
<p class="note">Run directory <code>{{.Dir}}</code>{{if .Tool}}, written by <code>{{.Tool}}</code>{{end}}.
Tetris is the circuit scheduler of the Tetris paper (§3) for a rearrangeably non-blocking Beneš
fabric of 2×2 photonic switches; the baselines are those of its §4.1.</p>

<h2>Inputs and provenance</h2>
{{if .Inputs}}<table><tr><th>role</th><th>path</th><th>SHA-256</th></tr>
{{range .Inputs}}<tr><td>{{.Role}}</td><td><code>{{.Path}}</code></td><td><code>{{if .SHA256}}{{.SHA256}}{{else}}(built in){{end}}</code></td></tr>
{{end}}</table>{{else}}<p class="note">No inputs recorded.</p>{{end}}
{{with .Emulate}}<p>Emulation: transfer model <b>{{.TransferModel}}</b>, reconfiguration model <b>{{.ReconfigModel}}</b>,
lower bounds at {{bw .Bandwidth}} and α_r = {{secs .Reconfig}} (file <code>{{.Path}}</code>).</p>{{end}}

{{if .Calibration}}<h2>Calibration</h2>
<p class="note">Per ordered GPU pair, the α-β (Hockney) fit T(m) = α + β·m of the measured copy times (Tetris §4.1–4.2, Figure 13).</p>
{{range .Calibration}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}{{end}}

{{with .Emulate}}<h2>Results</h2>
{{if .Totals}}<p>Sums over the {{.Matrices}} matrices (one inference pass); ratios are to the sums of the per-matrix lower bounds
(bandwidth bound, Tetris §2.3; reconfiguration-aware bound: each endpoint's load plus one α_r per distinct partner).</p>
<table><tr><th>algorithm</th><th>completion (ms)</th><th>/ bandwidth bound</th><th>/ reconfiguration bound</th><th>Tetris speedup</th><th>rounds or groups</th><th>state changes</th></tr>
{{range .Totals}}<tr><td>{{.Algorithm}}</td><td>{{ms .CompletionSeconds}}</td><td>{{ratio .CompletionSeconds .BandwidthBoundSeconds}}</td><td>{{ratio .CompletionSeconds .ReconfigBoundSeconds}}</td><td>{{num .Speedup}}</td><td>{{.Groups}}</td><td>{{.StateChanges}}</td></tr>
{{end}}</table>{{end}}
<details{{if not .Totals}} open{{end}}><summary>Every run ({{len .Runs}})</summary>
<table><tr><th>matrix</th><th>algorithm</th><th>completion (ms)</th><th>/ bandwidth bound</th><th>/ reconfiguration bound</th><th>Tetris speedup</th></tr>
{{range .Runs}}<tr><td>{{.Matrix.Index}} {{.Matrix.Label}}</td><td>{{.Algorithm}}</td><td>{{ms .CompletionSeconds}}</td><td>{{ratio .CompletionSeconds .BandwidthBoundSeconds}}</td><td>{{ratio .CompletionSeconds .ReconfigBoundSeconds}}</td><td>{{num .Speedup}}</td></tr>
{{end}}</table></details>
{{end}}

{{if .Gantt}}<h2>Gantt charts</h2>
{{if .Emulate}}<p>The matrix that takes Tetris longest: <b>{{.Worst.Index}}</b> ({{.Worst.Label}}); the best baseline over the trace: <b>{{.Best}}</b>.
Rows are transmitters and switches; bars are circuits (transmitting) and reconfigurations.</p>{{end}}
{{range .Gantt}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}{{end}}

{{if or .Sweeps .Heatmaps}}<h2>Bandwidth × α_r sweep</h2>
{{range .Sweeps}}<p>{{.Matrices}} matrices, algorithms {{range $i, $a := .Algorithms}}{{if $i}}, {{end}}{{$a}}{{end}} (speedups over {{.Reference}});
bandwidths {{range $i, $b := .Bandwidths}}{{if $i}}, {{end}}{{bw $b}}{{end}}; α_r {{range $i, $r := .Reconfigs}}{{if $i}}, {{end}}{{secs $r}}{{end}};
{{.TransferModel}}; {{.ReconfigModel}} (manifest <code>{{.Path}}</code>). As Tetris Figures 8 and 10.</p>{{end}}
<div class="grid">{{range .Heatmaps}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}</div>{{end}}

{{if .Other}}<h2>Other figures</h2>
<div class="grid">{{range .Other}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}</div>{{end}}

{{range .Texts}}<h2>{{.Name}}</h2><pre>{{.Body}}</pre>{{end}}
</body>
</html>
`))
