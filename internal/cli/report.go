package cli

import (
	"context"
	"errors"
	"io"
)

// cmdReport is replaced by the report work (issue 6).
func cmdReport(_ context.Context, _ []string, _, _ io.Writer) (int, error) {
	return ExitError, errors.New("report: not built yet")
}
