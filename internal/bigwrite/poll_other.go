//go:build !linux

package bigwrite

import "time"

// WaitWritable waits a little before the next write attempt (no ppoll here).
func WaitWritable(fd int, d time.Duration) error {
	time.Sleep(min(d, time.Millisecond))
	return nil
}
