// Package procstat reads CPU time and load from the Linux kernel: this process's CPU with
// getrusage, another process's from /proc/PID/stat, and the machine's load average from
// /proc/loadavg.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ), 100 Hz on every Linux
// architecture Go supports.
const clockTick = 10 * time.Millisecond

// SelfCPU returns the user plus system CPU time this process has used.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("procstat: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// ProcessCPU returns the user plus system CPU time process pid has used, to 10 ms.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15) of a /proc/PID/stat line. The command
// name (field 2) is in parentheses and may contain spaces, so fields are counted after the
// last ')'.
func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("procstat: malformed stat %q", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("procstat: short stat %q", s)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("procstat: bad utime/stime in %q", s)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// LoadAvg returns the 1, 5 and 15 minute load averages of the machine.
func LoadAvg() ([3]float64, error) {
	var la [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return la, fmt.Errorf("procstat: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return la, fmt.Errorf("procstat: malformed /proc/loadavg %q", b)
	}
	for i := range la {
		if la[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return la, fmt.Errorf("procstat: malformed /proc/loadavg %q", b)
		}
	}
	return la, nil
}
