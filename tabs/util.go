package tabs

import "errors"

func asDialog(err error, target **dialogPendingError) bool { return errors.As(err, target) }
