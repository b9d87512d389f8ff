package nvml

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Identity is what ties a CUDA device to an NVML device: never the index alone, which can differ
// between the two.
type Identity struct {
	Index int    // NVML index
	UUID  string // GPU-xxxxxxxx-...
	BusID string // PCI bus id in any of NVML's or CUDA's spellings
}

// NormalizeBusID returns a PCI bus id as domain:bus:device.function with a 4-digit domain in lower
// case. NVML spells the domain with 8 digits ("00000000:18:00.0"), CUDA with 4 ("0000:18:00.0").
func NormalizeBusID(id string) (string, error) {
	parts := strings.Split(strings.TrimSpace(id), ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return "", fmt.Errorf("PCI bus id %q: want domain:bus:device.function", id)
	}
	devFn := strings.Split(parts[2], ".")
	if len(devFn) != 2 {
		return "", fmt.Errorf("PCI bus id %q: want domain:bus:device.function", id)
	}
	var v [4]uint64
	for i, s := range []string{parts[0], parts[1], devFn[0], devFn[1]} {
		n, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			return "", fmt.Errorf("PCI bus id %q: field %q is not hex", id, s)
		}
		v[i] = n
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]), nil
}

// MapOrdinals returns, for each CUDA ordinal, the NVML index of its device, under the given
// CUDA_VISIBLE_DEVICES (nil: unset, every device visible). Entries are indices into CUDA's full
// enumeration or UUIDs ("GPU-" and a unique prefix of the rest); CUDA enumerates in PCI bus order
// (CUDA_DEVICE_ORDER=PCI_BUS_ID, which is also the default order on a server of identical GPUs),
// which is not necessarily NVML's index order, so the devices are sorted by bus id first.
//
// CUDA silently drops an invalid entry and everything after it. Measuring on the wrong GPUs is
// worse than stopping, so here an invalid, ambiguous or repeated entry (or a MIG instance) is an
// error that names it.
func MapOrdinals(visible *string, ids []Identity) ([]int, error) {
	type dev struct {
		Identity
		bus string
	}
	devs := make([]dev, len(ids))
	for i, id := range ids {
		bus, err := NormalizeBusID(id.BusID)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", id.Index, err)
		}
		devs[i] = dev{id, bus}
	}
	slices.SortFunc(devs, func(a, b dev) int { return strings.Compare(a.bus, b.bus) })
	if visible == nil {
		out := make([]int, len(devs))
		for i, d := range devs {
			out[i] = d.Index
		}
		return out, nil
	}
	out := []int{}
	seen := map[int]bool{}
	if strings.TrimSpace(*visible) == "" {
		return out, nil // set but empty: CUDA sees no device
	}
	for _, raw := range strings.Split(*visible, ",") {
		e := strings.TrimSpace(raw)
		pos := -1
		switch {
		case strings.HasPrefix(e, "MIG-"):
			return nil, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q: entry %q is a MIG instance; the harness measures whole GPUs", *visible, e)
		case strings.HasPrefix(e, "GPU-"):
			for i, d := range devs {
				if strings.HasPrefix(strings.ToLower(d.UUID), strings.ToLower(e)) {
					if pos >= 0 {
						return nil, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q: UUID prefix %q matches more than one GPU", *visible, e)
					}
					pos = i
				}
			}
			if pos < 0 {
				return nil, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q: no GPU has UUID %q", *visible, e)
			}
		default:
			n, err := strconv.Atoi(e)
			if err != nil || n < 0 || n >= len(devs) {
				return nil, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q: entry %q is neither a device index 0..%d nor a GPU- UUID", *visible, e, len(devs)-1)
			}
			pos = n
		}
		if seen[pos] {
			return nil, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q: entry %q names GPU %d again", *visible, e, devs[pos].Index)
		}
		seen[pos] = true
		out = append(out, devs[pos].Index)
	}
	return out, nil
}
