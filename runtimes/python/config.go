package python

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Config is the code form as the runtime receives it.
type Config struct {
	Source       string
	Function     string
	Dependencies string
	// ChunkSize is 0 for whole objects.
	ChunkSize int
}

// ConfigFromEnv reads the Config from the environment through getenv
// (os.Getenv), defaulting the function; errors name the variable at fault.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Source:       getenv(EnvSource),
		Function:     getenv(EnvFunction),
		Dependencies: getenv(EnvDependencies),
	}
	if c.Function == "" {
		c.Function = DefaultFunction
	}
	var errs []error
	if strings.TrimSpace(c.Source) == "" {
		errs = append(errs, fmt.Errorf("%s is empty: it must hold the Python source defining %s", EnvSource, c.Function))
	}
	if s := strings.TrimSpace(getenv(EnvChunkSize)); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a number of bytes, 0 for whole objects", EnvChunkSize, s))
		}
		c.ChunkSize = n
	}
	return c, errors.Join(errs...)
}
