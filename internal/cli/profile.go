package cli

import (
	"context"
	"errors"
	"io"
)

// cmdProfile is replaced by the profile-capture work (issue 2, item 3).
func cmdProfile(_ context.Context, _ []string, _, _ io.Writer) (int, error) {
	return ExitError, errors.New("profile: not built yet")
}
