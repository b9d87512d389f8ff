package nvml

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetris-hil/tetris-hil/gpu/nvml/internal/nv"
)

// Telemetry is a GPU's state at one moment; recorded before and after each measurement so that a
// slow result can be told apart from a hot or throttled GPU.
type Telemetry struct {
	TemperatureC    uint32   `json:"temperature_c"`
	SMClockMHz      uint32   `json:"sm_clock_mhz"`
	MemClockMHz     uint32   `json:"mem_clock_mhz"`
	ThrottleReasons []string `json:"throttle_reasons"` // empty: running at full clocks
	// Unavailable names each reading NVML could not give, with its answer ("temperature:
	// ERROR_NOT_SUPPORTED"); that field's zero is no reading. Empty when everything was read.
	Unavailable []string `json:"unavailable,omitempty"`
}

// Sample reads GPU i's temperature, clocks and the reasons its clocks are held down.
func (l *Lib) Sample(i int) (Telemetry, error) {
	d, err := l.device(i)
	if err != nil {
		return Telemetry{}, err
	}
	return sample(d), nil
}

func sample(d nv.Device) Telemetry {
	var t Telemetry
	missing := func(what string, ret nv.Return) {
		t.Unavailable = append(t.Unavailable, fmt.Sprintf("%s: %v", what, ret))
	}
	// GetTemperature prefers nvmlDeviceGetTemperatureV, which NVML 13 keeps (the older call is
	// deprecated there), and falls back to the older call on drivers without it.
	if v, ret := d.GetTemperature(nv.TEMPERATURE_GPU); ret == nv.SUCCESS {
		t.TemperatureC = v
	} else {
		missing("temperature", ret)
	}
	if v, ret := d.GetClockInfo(nv.CLOCK_SM); ret == nv.SUCCESS {
		t.SMClockMHz = v
	} else {
		missing("sm_clock", ret)
	}
	if v, ret := d.GetClockInfo(nv.CLOCK_MEM); ret == nv.SUCCESS {
		t.MemClockMHz = v
	} else {
		missing("mem_clock", ret)
	}
	reasons, ret := d.GetCurrentClocksEventReasons()
	if ret != nv.SUCCESS {
		// Drivers before 535 only have the older name for the same bits (deprecated in NVML 13).
		if r2, ret2 := d.GetCurrentClocksThrottleReasons(); ret2 == nv.SUCCESS {
			reasons, ret = r2, ret2
		}
	}
	t.ThrottleReasons = []string{}
	if ret == nv.SUCCESS {
		t.ThrottleReasons = ThrottleReasons(reasons)
	} else {
		missing("throttle_reasons", ret)
	}
	return t
}

var throttleNames = []struct {
	bit  uint64
	name string
}{
	{nv.ClocksThrottleReasonGpuIdle, "gpu_idle"},
	{nv.ClocksThrottleReasonApplicationsClocksSetting, "clocks_setting"},
	{nv.ClocksThrottleReasonSwPowerCap, "sw_power_cap"},
	{nv.ClocksThrottleReasonHwSlowdown, "hw_slowdown"},
	{nv.ClocksThrottleReasonSyncBoost, "sync_boost"},
	{nv.ClocksThrottleReasonSwThermalSlowdown, "sw_thermal_slowdown"},
	{nv.ClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
	{nv.ClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake"},
	{nv.ClocksThrottleReasonDisplayClockSetting, "display_clock_setting"},
}

// ThrottleReasons names the bits of an NVML clocks-event-reasons mask.
func ThrottleReasons(mask uint64) []string {
	out := []string{}
	for _, t := range throttleNames {
		if mask&t.bit != 0 {
			out = append(out, t.name)
			mask &^= t.bit
		}
	}
	if mask != 0 {
		out = append(out, fmt.Sprintf("0x%x", mask))
	}
	return out
}

// ClockLock holds GPUs' SM clocks locked; Restore unlocks them. It restores by itself when the
// context passed to LockClocks ends, so a SIGINT that cancels the context unlocks the clocks even
// while a measurement is stuck. Callers also defer Restore, for the error and panic paths.
type ClockLock struct {
	lib  *Lib
	gpus []int
	once sync.Once
	err  error
	stop func() bool
}

// LockClocks locks the SM clock of each GPU to mhz (0: the GPU's maximum SM clock). On failure the
// GPUs locked so far are restored before it returns. Locking needs root on real GPUs.
func (l *Lib) LockClocks(ctx context.Context, gpus []int, mhz uint32) (*ClockLock, error) {
	c := &ClockLock{lib: l}
	for _, i := range gpus {
		d, err := l.device(i)
		if err != nil {
			return nil, errors.Join(err, c.Restore())
		}
		f := mhz
		if f == 0 {
			var ret nv.Return
			if f, ret = d.GetMaxClockInfo(nv.CLOCK_SM); ret != nv.SUCCESS {
				return nil, errors.Join(errRet("nvmlDeviceGetMaxClockInfo", i, ret), c.Restore())
			}
		}
		if ret := d.SetGpuLockedClocks(f, f); ret != nv.SUCCESS {
			hint := ""
			if ret == nv.ERROR_NO_PERMISSION {
				hint = " (locking clocks needs root; run without --lock-clocks)"
			}
			return nil, errors.Join(fmt.Errorf("GPU %d: locking SM clock at %d MHz: %v%s", i, f, ret, hint), c.Restore())
		}
		c.gpus = append(c.gpus, i)
	}
	c.stop = context.AfterFunc(ctx, func() { _ = c.Restore() })
	return c, nil
}

// Restore unlocks every GPU this lock locked; calling it again returns the first result.
func (c *ClockLock) Restore() error {
	c.once.Do(func() {
		if c.stop != nil {
			c.stop()
		}
		var errs []error
		for _, i := range c.gpus {
			if ret := c.lib.devices[i].ResetGpuLockedClocks(); ret != nv.SUCCESS {
				errs = append(errs, errRet("nvmlDeviceResetGpuLockedClocks", i, ret))
			}
		}
		c.err = errors.Join(errs...)
	})
	return c.err
}
