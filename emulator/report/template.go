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
	"bw":      units.FormatBandwidth,
	"plusLen": func(s []SwitchRow, more int) int { return len(s) + more },
	"secs":    units.FormatSeconds,
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
caption { text-align: left; font-weight: bold; padding: .3em 0; }
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
planned at {{bw .Bandwidth}} and α_r = {{secs .Reconfig}}; the lower bounds follow the two models (file <code>{{.Path}}</code>).</p>{{end}}

{{if .Calibration}}<h2>Calibration</h2>
<p class="note">Per ordered GPU pair, the α-β (Hockney) fit T(m) = α + β·m of the measured copy times (Tetris §4.1–4.2, Figure 13).</p>
{{range .Calibration}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}{{end}}

{{with .Emulate}}<h2>Results</h2>
{{if .Totals}}<p>Sums over the {{.Matrices}} matrices (one inference pass); ratios are to the sums of the per-matrix lower bounds
(bandwidth bound, Tetris §2.3: each endpoint's least transfer time under the run's transfer model; reconfiguration-aware bound: that plus one α_r per distinct partner).</p>
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
{{.TransferModel}}; {{.ReconfigModel}} (manifest <code>{{.Path}}</code>). As Tetris Figures 8 and 10.</p>
{{if .Wear}}<details{{if .Tenants}} open{{end}}><summary>Switch state changes over the pass ({{len .Wear}} rows{{if .WearWeights}}; wear weights {{range $i, $w := .WearWeights}}{{if $i}}, {{end}}{{$w}}{{end}}: tetris@wW is Tetris planned at weight W{{end}}; switch wear, Tetris §5)</summary>
{{if .Tenants}}<p>Tenants {{range $i, $t := .Tenants}}{{if $i}}, {{end}}{{$t}}{{end}} on one fabric under the allocations {{range $i, $a := .Allocations}}{{if $i}}, {{end}}{{$a}}{{end}} (ALGORITHM@ALLOCATION; multi-tenant isolation, Tetris §5).</p>{{end}}
<table><tr><th>bandwidth</th><th>α_r</th><th>algorithm</th><th>completion / bound</th><th>state changes</th><th>most on one switch</th>{{range .Tenants}}<th>tenant {{.}} (ms)</th>{{end}}</tr>
{{range .Wear}}<tr><td>{{.Bandwidth}}</td><td>{{.Reconfig}}</td><td>{{.Algorithm}}</td><td>{{.OverBound}}</td><td>{{.Changes}}</td><td>{{.Most}}</td>{{range .Tenants}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></details>{{end}}{{end}}
<div class="grid">{{range .Heatmaps}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}</div>{{end}}

{{range .Replays}}<h2>Live replay</h2>
<p>Replay <code>{{.Path}}</code>: reconfiguration {{.Reconfiguration}}; predicted with {{.PredictTransfer}} and {{.PredictReconfig}}.
Live times are measured on the devices; the prediction is the emulator's run of the same schedule under those models.</p>
<table><tr><th>run</th><th>circuits</th><th>commands</th><th>live (ms)</th><th>predicted (ms)</th><th>live / predicted</th><th>start Δ median (ms)</th><th>start Δ p99 (ms)</th><th>start Δ worst (ms)</th></tr>
{{range .Runs}}<tr><td>{{.Matrix.Index}} {{.Algorithm}}</td><td>{{.Circuits}}</td><td>{{.Commands}}</td><td>{{ms .Live}}</td><td>{{ms .Predicted}}</td><td>{{num .LiveOverPredicted}}</td><td>{{ms .StartDifference.Median}}</td><td>{{ms .StartDifference.P99}}</td><td>{{ms .StartDifference.Worst}}</td></tr>
{{end}}</table>
<div class="grid">{{with .Completion.URI}}<figure><img src="{{.}}" alt="live vs predicted completion"><figcaption>live vs predicted completion</figcaption></figure>{{end}}
{{with .Starts.URI}}<figure><img src="{{.}}" alt="start differences"><figcaption>per-circuit start difference, live − predicted</figcaption></figure>{{end}}</div>
{{range .Runs}}<details><summary>Switch log: {{.Matrix.Index}} {{.Algorithm}} ({{len .Switches}}{{if .MoreSwitches}} of {{.MoreSwitches | plusLen .Switches}}{{end}} changes; switches named STAGE:INDEX as <code>tetris-hil switch set</code> takes them)</summary>
<table><tr><th>switch</th><th>from</th><th>to</th><th>start (ms)</th><th>settled (ms)</th></tr>
{{range .Switches}}<tr><td><code>{{.Switch}}</code></td><td>{{.From}}</td><td>{{.To}}</td><td>{{ms .Start}}</td><td>{{ms .End}}</td></tr>
{{end}}</table></details>
{{end}}{{end}}

{{with .Reproduce}}<h2>Reproduction of the Tetris paper's figures</h2>
<p>From <code>{{.Path}}</code>: for each figure, what the paper's text states and our number for the same quantity.</p>
{{range .Figures}}<h3>{{.ID}}: {{.Title}}</h3>
<p class="note">{{.Setting}}</p>
{{range .Tables}}<table><caption>{{.Title}}</caption><tr><th>quantity</th><th>paper</th><th>ours</th></tr>
{{range .Rows}}<tr><td>{{.Quantity}}</td><td>{{.Paper}}</td><td>{{.Ours}}</td></tr>
{{end}}</table>
{{end}}{{range .Notes}}<p class="note">note: {{.}}</p>{{end}}
<div class="grid">{{range index $.ReproFigs .ID}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code></figcaption></figure>
{{end}}</div>
{{end}}{{end}}

{{if .Other}}<h2>Other figures</h2>
<div class="grid">{{range .Other}}<figure><img src="{{.URI}}" alt="{{.Name}}"><figcaption><code>{{.Name}}</code>{{if .Command}} · reproduce: <code>{{.Command}}</code>{{end}}</figcaption></figure>
{{end}}</div>{{end}}

{{range .Texts}}<h2>{{.Name}}</h2><pre>{{.Body}}</pre>{{end}}
</body>
</html>
`))
