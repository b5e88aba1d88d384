package egress

import (
	"fmt"
	"net/url"
)

// maxURLLen bounds a ?src= URL, like every other input of the agent.
const maxURLLen = 2048

func parseURL(raw string) (*url.URL, error) {
	if len(raw) > maxURLLen {
		return nil, fmt.Errorf("%w: the URL is longer than %d bytes", ErrRefused, maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q; only http and https are fetched", ErrRefused, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: credentials in the URL are not sent", ErrRefused)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%w: the URL names no host", ErrRefused)
	}
	return u, nil
}
