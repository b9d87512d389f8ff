// Package report turns a run directory (what tetris-hil demo, emulate, sweep or replay wrote)
// into one self-contained HTML page to share: the inputs and their hashes, the calibration plot,
// the results table, Gantt charts, the sweep heatmaps and, where the directory records them, the
// commands that reproduce each figure. Everything is inlined (images as data: URIs, no scripts,
// no fonts or styles fetched), so the page opens the same offline, from a mail or an archive.
//
// It reads only files: the emulate JSON (experiment.Report), the sweep manifest (sweep.json), a
// replay directory's summary.json and manifest.json with the run records they name, a
// reproduce directory's reproduce.json, commands.json (figure file → command, as the demo
// writes it) and the images beside them.
package report

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tetris-hil/tetris-hil/emulator"
	"github.com/tetris-hil/tetris-hil/emulator/experiment"
	"github.com/tetris-hil/tetris-hil/internal/provenance"
	"github.com/tetris-hil/tetris-hil/internal/readlimit"
)

// Emulate is an emulate --json file.
type Emulate struct {
	experiment.Report
	// Path is where it was read from.
	Path string
}

// ReadEmulate reads an emulate --json file.
func ReadEmulate(path string) (*Emulate, error) {
	b, err := readJSON(path)
	if err != nil {
		return nil, err
	}
	var e Emulate
	if err := json.Unmarshal(b, &e.Report); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(e.Runs) == 0 {
		return nil, fmt.Errorf("%s: no runs (not an emulate --json file?)", path)
	}
	e.Path = path
	return &e, nil
}

// Matrices is the number of distinct matrices of the runs.
func (e *Emulate) Matrices() int {
	seen := map[int]bool{}
	for _, r := range e.Runs {
		seen[r.Matrix.Index] = true
	}
	return len(seen)
}

// WorstMatrix is the matrix that takes Tetris longest (the slowest All-to-All of the pass), or
// the first run's matrix where Tetris did not run.
func (e *Emulate) WorstMatrix() emulator.MatrixRef {
	var worst *experiment.Record
	for i := range e.Runs {
		r := &e.Runs[i]
		if r.Algorithm == experiment.DefaultReference && (worst == nil || r.CompletionSeconds > worst.CompletionSeconds) {
			worst = r
		}
	}
	if worst == nil {
		return e.Runs[0].Matrix
	}
	return worst.Matrix
}

// tetrisFamily are the runs that are Tetris's planner (the ideal snb included), not baselines.
func tetrisFamily(algo string) bool {
	return strings.HasPrefix(algo, "tetris") || algo == "snb"
}

// BestBaseline is the baseline with the least completion summed over the matrices ("" when
// only Tetris ran).
func (e *Emulate) BestBaseline() string {
	sum := map[string]float64{}
	var order []string
	for _, r := range e.Runs {
		if tetrisFamily(r.Algorithm) {
			continue
		}
		if _, ok := sum[r.Algorithm]; !ok {
			order = append(order, r.Algorithm)
		}
		sum[r.Algorithm] += r.CompletionSeconds
	}
	best := ""
	for _, a := range order {
		if best == "" || sum[a] < sum[best] {
			best = a
		}
	}
	return best
}

// Sweep is a sweep directory's manifest (sweep.json), as far as the report shows it.
type Sweep struct {
	Tool          string             `json:"tool"`
	Inputs        []provenance.Input `json:"inputs"`
	Matrices      int                `json:"matrices"`
	Algorithms    []string           `json:"algorithms"`
	Reference     string             `json:"reference"`
	Bandwidths    []float64          `json:"bandwidths_bytes_per_second"`
	Reconfigs     []float64          `json:"reconfigs_seconds"`
	TransferModel string             `json:"transfer_model"`
	ReconfigModel string             `json:"reconfig_model"`
	WearWeights   []float64          `json:"wear_weights"`
	Tenants       []string           `json:"tenants"`
	Allocations   []string           `json:"allocations"`
	ResultsFile   string             `json:"results"`
	Path          string             `json:"-"`
	// Wear is the switch state changes of sweep.csv's rows, where its columns hold them.
	Wear []SweepWear `json:"-"`
}

// SweepWear is one row of a sweep's CSV as the report's state-change table shows it (switch
// wear, Tetris §5): the cell, the algorithm (tetris@w4: Tetris at wear weight 4), completion
// over the lower bound, and the changes over the pass, in total and on the most-changed switch.
type SweepWear struct {
	Bandwidth, Reconfig, Algorithm string
	OverBound                      string
	Changes, Most                  string
	// Tenants are, in a multi-tenant sweep, each tenant's completion over the pass in ms (the
	// algorithm is then algorithm@allocation).
	Tenants []string
}

// figure is one embedded image.
type figure struct {
	Name    string // path relative to the run directory
	URI     template.URL
	Command string
}

// page is what the template shows.
type page struct {
	Dir         string
	Tool        string
	Inputs      []provenance.Input
	Emulate     *Emulate
	Worst       emulator.MatrixRef
	Best        string
	Sweeps      []*Sweep
	Calibration []figure
	Gantt       []figure
	Heatmaps    []figure
	Other       []figure
	Texts       []text
	Replays     []*Replay
	Reproduce   *Reproduce
	// ReproFigs are a reproduce directory's charts by figure ID.
	ReproFigs map[string][]figure
}

type text struct{ Name, Body string }

// Every file report reads goes through readlimit: a JSON file within its limit for a report's
// JSON (readlimit.ReportJSON), an image within readlimit.Image (8 MiB by default: a report is
// for sharing, and a chart of this size is already unreadable in a browser), each checked by
// stat before it is read, and never a FIFO or device.
func readJSON(path string) ([]byte, error) {
	return readlimit.ReadFile(context.Background(), path, readlimit.ReportJSON)
}

// maxEntries bounds the walk of a run directory (flat or one level deep): a directory with more
// is not a run directory (report / would otherwise walk the file system).
const maxEntries = 10000

// markers are the files that make a directory a run directory: what demo, emulate --timeline,
// sweep --out, replay --out and reproduce write beside their results (an emulate --json file,
// found by its contents, is one too).
var markers = map[string]bool{"commands.json": true, "sweep.json": true, "manifest.json": true,
	"timelines.json": true, "reproduce.json": true}

// Write renders the report of dir to w. It fails when dir holds nothing it can show.
func Write(w io.Writer, dir string) error {
	p, err := build(dir)
	if err != nil {
		return err
	}
	return tmpl.Execute(w, p)
}

func build(dir string) (*page, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	p := &page{Dir: dir}
	commands := map[string]string{}
	if b, err := readJSON(filepath.Join(dir, "commands.json")); err == nil {
		if err := json.Unmarshal(b, &commands); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "commands.json"), err)
		}
	}
	if ok, err := isRunDir(dir); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%s is not a run directory: no emulate JSON, sweep.json, commands.json, manifest.json or reproduce.json in it (run tetris-hil demo, or emulate --json, sweep, replay or reproduce --out, into it)", dir)
	}
	var files []string
	entries := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entries++; entries > maxEntries {
			return fmt.Errorf("%s: more than %d entries within two levels: not a run directory", dir, maxEntries)
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= 2 {
				return filepath.SkipDir // run directories are flat or one level deep
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, rel := range files {
		path := filepath.Join(dir, rel)
		base := filepath.Base(rel)
		ext := strings.ToLower(filepath.Ext(rel))
		emulate := false
		if ext == ".json" && p.Emulate == nil {
			if emulate, err = isEmulate(path); err != nil {
				return nil, err
			}
		}
		switch {
		case emulate:
			e, err := ReadEmulate(path)
			if err != nil {
				return nil, err
			}
			p.Emulate = e
			p.Worst, p.Best = e.WorstMatrix(), e.BestBaseline()
			if p.Tool == "" {
				p.Tool, p.Inputs = e.Tool, e.Inputs
			}
		case base == "summary.json" && isReplay(path):
			r, err := readReplay(path, rel)
			if err != nil {
				return nil, err
			}
			p.Replays = append(p.Replays, r)
			if p.Tool == "" {
				p.Tool, p.Inputs = r.Tool, r.Inputs
			}
		case base == "reproduce.json" && p.Reproduce == nil:
			r, err := readReproduce(path, rel)
			if err != nil {
				return nil, err
			}
			p.Reproduce = r
			if p.Tool == "" {
				p.Tool, p.Inputs = r.Tool, r.Inputs
			}
		case base == "sweep.json":
			s, err := readSweep(path)
			if err != nil {
				return nil, err
			}
			s.Path = rel
			if s.Wear, err = readSweepWear(filepath.Join(filepath.Dir(path), s.ResultsFile), s.Tenants); err != nil {
				return nil, err
			}
			p.Sweeps = append(p.Sweeps, s)
			if p.Tool == "" {
				p.Tool, p.Inputs = s.Tool, s.Inputs
			}
		case ext == ".png" || ext == ".svg":
			f, err := embed(path, rel, commands[rel])
			if err != nil {
				return nil, err
			}
			switch {
			case ext == ".svg" && hasPNG(files, rel):
				// The PNG twin is shown; SVGs render with the viewer's fonts, PNGs as drawn.
			case strings.HasPrefix(base, "calibration"):
				p.Calibration = append(p.Calibration, f)
			case strings.HasPrefix(base, "gantt"):
				p.Gantt = append(p.Gantt, f)
			case strings.HasPrefix(base, "speedup-") || strings.HasPrefix(base, "completion-vs-lower-bound"):
				p.Heatmaps = append(p.Heatmaps, f)
			default:
				p.Other = append(p.Other, f)
			}
		case ext == ".txt" && (base == "sweep.txt" || base == "calibration.txt"):
			b, err := readJSON(path) // a text the size of a JSON file at most
			if err != nil {
				return nil, err
			}
			p.Texts = append(p.Texts, text{Name: rel, Body: string(b)})
		}
	}
	if p.Reproduce != nil {
		p.groupReproduceFigures()
	}
	if p.Emulate == nil && len(p.Sweeps) == 0 && len(p.Replays) == 0 && p.Reproduce == nil && len(p.Calibration)+len(p.Gantt)+len(p.Heatmaps)+len(p.Other) == 0 {
		return nil, fmt.Errorf("%s: no emulate JSON, sweep.json, replay summary, reproduce.json or chart to report (run tetris-hil demo, or emulate --json, sweep, replay or reproduce --out, into it)", dir)
	}
	return p, nil
}

// groupReproduceFigures moves the charts under a figure's directory (fig7/…, as reproduce
// writes them) beside that figure's tables, out of the sections chosen by file name.
func (p *page) groupReproduceFigures() {
	ids := map[string]bool{}
	for _, f := range p.Reproduce.Figures {
		ids[f.ID] = true
	}
	p.ReproFigs = map[string][]figure{}
	for _, list := range []*[]figure{&p.Calibration, &p.Gantt, &p.Heatmaps, &p.Other} {
		kept := (*list)[:0]
		for _, f := range *list {
			dir, _, ok := strings.Cut(filepath.ToSlash(f.Name), "/")
			if ok && ids[dir] {
				p.ReproFigs[dir] = append(p.ReproFigs[dir], f)
				continue
			}
			kept = append(kept, f)
		}
		*list = kept
	}
}

func hasPNG(files []string, svg string) bool {
	png := strings.TrimSuffix(svg, filepath.Ext(svg)) + ".png"
	i := sort.SearchStrings(files, png)
	return i < len(files) && files[i] == png
}

// isRunDir says whether dir holds one of the markers, a sweep.json one level down, or an
// emulate --json file, looking only at its own entries: a directory that is not one (report /)
// is refused before it is walked.
func isRunDir(dir string) (bool, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if len(es) > maxEntries {
		return false, fmt.Errorf("%s: %d entries, more than %d: not a run directory", dir, len(es), maxEntries)
	}
	for _, e := range es {
		if markers[e.Name()] {
			return true, nil
		}
	}
	for _, e := range es {
		path := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if st, err := os.Stat(filepath.Join(path, "sweep.json")); err == nil && !st.IsDir() {
				return true, nil
			}
		} else if strings.EqualFold(filepath.Ext(e.Name()), ".json") {
			if ok, err := isEmulate(path); ok || err != nil {
				return ok, err
			}
		}
	}
	return false, nil
}

// isEmulate tells an emulate --json file by its keys (a run record or a calibration is not one).
// A file above its limit or not a regular file (a FIFO named *.json) is an error; another that
// cannot be read is not one.
func isEmulate(path string) (bool, error) {
	b, err := readJSON(path)
	if errors.Is(err, readlimit.ErrLimit) || errors.Is(err, readlimit.ErrNotRegular) {
		return false, err
	}
	if err != nil {
		return false, nil
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil {
		return false, nil
	}
	_, runs := keys["runs"]
	_, tm := keys["transfer_model"]
	return runs && tm, nil
}

func readSweep(path string) (*Sweep, error) {
	b, err := readJSON(path)
	if err != nil {
		return nil, err
	}
	var s Sweep
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// readSweepWear reads the state-change columns of a sweep's CSV: none when the file is absent
// or written before the columns were (their rows have no state_changes column), or when no row
// has counts (results merged from files that did not record them).
func readSweepWear(path string, tenants []string) ([]SweepWear, error) {
	if filepath.Base(path) != "sweep.csv" {
		return nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	b, err := readlimit.ReadFile(context.Background(), path, readlimit.ReportJSON)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"bandwidth", "reconfig", "algorithm", "completion_over_lower_bound", "state_changes", "state_changes_max"} {
		if _, ok := col[h]; !ok {
			return nil, nil
		}
	}
	var out []SweepWear
	known := false
	for _, r := range rows[1:] {
		w := SweepWear{Bandwidth: r[col["bandwidth"]], Reconfig: r[col["reconfig"]], Algorithm: r[col["algorithm"]],
			OverBound: r[col["completion_over_lower_bound"]], Changes: r[col["state_changes"]], Most: r[col["state_changes_max"]]}
		if v, err := strconv.ParseFloat(w.OverBound, 64); err == nil {
			w.OverBound = strconv.FormatFloat(v, 'f', 3, 64)
		}
		for _, t := range tenants {
			k, ok := col["tenant_"+t+"_completion_sum_seconds"]
			if !ok {
				return nil, fmt.Errorf("%s: no column tenant_%s_completion_sum_seconds for the manifest's tenant %s", path, t, t)
			}
			v, err := strconv.ParseFloat(r[k], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: column tenant_%s_completion_sum_seconds: %q is not a number", path, t, r[k])
			}
			w.Tenants = append(w.Tenants, strconv.FormatFloat(v*1e3, 'f', 4, 64))
		}
		known = known || w.Changes != ""
		out = append(out, w)
	}
	if !known {
		return nil, nil
	}
	return out, nil
}

func embed(path, rel, command string) (figure, error) {
	b, err := readlimit.ReadFile(context.Background(), path, readlimit.Image)
	if err != nil {
		return figure{}, err
	}
	mime := "image/png"
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		mime = "image/svg+xml"
	}
	if len(b) == 0 {
		return figure{}, errors.New(path + ": empty image")
	}
	return figure{Name: rel, URI: dataURI(mime, b), Command: command}, nil
}

// dataURI is b inlined as a data: URI of type mime.
func dataURI(mime string, b []byte) template.URL {
	return template.URL("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b))
}
