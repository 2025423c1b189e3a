//go:build linux

package solver

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// memoryLimit returns the memory this process may use: the machine's
// memory, or the limit of its control group (a container's) if lower. It
// returns 0 if neither can be read.
func memoryLimit() uint64 {
	var limit uint64
	var info syscall.Sysinfo_t
	if syscall.Sysinfo(&info) == nil {
		limit = uint64(info.Totalram) * uint64(info.Unit)
	}
	// cgroup v2, then v1; "max" or an absurd v1 value means no limit.
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 && (limit == 0 || n < limit) {
			limit = n
		}
		break
	}
	return limit
}
