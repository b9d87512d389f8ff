package trace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tetris-hil/tetris-hil/internal/readlimit"
)

// Format is a file format a trace can be read from.
type Format string

const (
	FormatJSON    Format = "json"          // canonical trace
	FormatCSV     Format = "csv"           // one matrix
	FormatNPY     Format = "npy"           // n×n or m×n×n array
	FormatRouting Format = "routing-jsonl" // token routings: needs ImportRouting's options
)

// ErrNeedsImport is wrapped by Load's error for a routing JSONL file: turning routings into bytes
// needs the model (experts, hidden size, placement), which only `trace import` is told.
var ErrNeedsImport = errors.New("token-routing JSONL must be imported first")

// DetectFormat decides a file's format from its extension, and from its first bytes when the
// extension says nothing (.npy magic; a JSON object with "experts" on its first line is routing
// JSONL; other JSON is a trace; anything else is CSV).
func DetectFormat(path string, head []byte) Format {
	if looksLikeRouting(head) {
		// Routing loggers often name their output .json; say "import it" rather than
		// "unknown field".
		return FormatRouting
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return FormatJSON
	case ".csv", ".tsv", ".txt":
		return FormatCSV
	case ".npy":
		return FormatNPY
	case ".jsonl", ".ndjson":
		return FormatRouting
	}
	if IsNPY(head) {
		return FormatNPY
	}
	if t := bytes.TrimSpace(head); len(t) > 0 && t[0] == '{' {
		return FormatJSON
	}
	return FormatCSV
}

// looksLikeRouting says whether the first line is a one-line JSON object with "experts" and no
// "version": a routing record, not a trace.
func looksLikeRouting(head []byte) bool {
	t := bytes.TrimSpace(head)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	first, _, _ := bytes.Cut(t, []byte{'\n'})
	return bytes.Contains(first, []byte(`"experts"`)) && !bytes.Contains(first, []byte(`"version"`))
}

// LoadOptions say how Load reads metadata-free formats.
type LoadOptions struct {
	MaxPorts int
	Layout   Layout // for .npy and CSV; default LayoutLayers
	// Context stops reading the file once done (nil: never). Load reads within readlimit's
	// limit for a demand, and only a regular file.
	Context context.Context
}

// Load reads a trace from a canonical JSON, CSV or .npy file, by extension or content. It
// streams the file: what it holds is the matrices, not the file as well.
func Load(path string, o LoadOptions) (*Trace, error) { return LoadAs(path, "", o) }

// LoadAs is Load with the format given ("" detects it as Load does).
func LoadAs(path string, format Format, o LoadOptions) (*Trace, error) {
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := readlimit.Open(ctx, path, readlimit.Demand)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if o.Layout == "" {
		o.Layout = LayoutLayers
	}
	br := bufio.NewReaderSize(f, 64*1024)
	head, err := br.Peek(4096)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if format == "" {
		format = DetectFormat(path, head)
	}
	switch format {
	case FormatJSON:
		t, err := decode(br, func() ([]byte, error) { return readlimit.ReadFile(ctx, path, readlimit.Demand) }, o.MaxPorts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	case FormatNPY:
		ms, err := ReadNPY(br, path, o.MaxPorts)
		if err != nil {
			return nil, err
		}
		return fromNPY(ms, o, path)
	case FormatCSV:
		if o.Layout == LayoutPairs {
			return nil, fmt.Errorf("%s: a CSV file holds one matrix; layout pairs needs two per layer", path)
		}
		return ReadCSV(br, path, o.MaxPorts)
	}
	return nil, needsImport(path)
}

func needsImport(name string) error {
	return fmt.Errorf("%s: %w: run `tetris-hil trace import --format routing-jsonl --gpus N --experts E --hidden H %s -o trace.json` and use trace.json", name, ErrNeedsImport, name)
}

// Parse is Load on bytes already read; name is the file name for errors and format detection.
func Parse(data []byte, name string, o LoadOptions) (*Trace, error) {
	if o.Layout == "" {
		o.Layout = LayoutLayers
	}
	switch f := DetectFormat(name, data[:min(len(data), 4096)]); f {
	case FormatJSON:
		return Read(bytes.NewReader(data), name, o.MaxPorts)
	case FormatNPY:
		ms, err := ReadNPY(bytes.NewReader(data), name, o.MaxPorts)
		if err != nil {
			return nil, err
		}
		return fromNPY(ms, o, name)
	case FormatRouting:
		return nil, needsImport(name)
	default:
		if o.Layout == LayoutPairs {
			return nil, fmt.Errorf("%s: a CSV file holds one matrix; layout pairs needs two per layer", name)
		}
		return ReadCSV(bytes.NewReader(data), name, o.MaxPorts)
	}
}

// ReadAny is Parse on a reader.
func ReadAny(r io.Reader, name string, o LoadOptions) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return Parse(data, name, o)
}

// fromNPY wraps an array's matrices in a trace and holds it to what every reader promises
// (Validate: among others, the byte limits).
func fromNPY(ms [][][]int64, o LoadOptions, name string) (*Trace, error) {
	t, err := FromMatrices(ms, o.Layout, name)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(o.MaxPorts); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}
