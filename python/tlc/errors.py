"""The exceptions of the tlc package."""


class TlcError(RuntimeError):
    """A libtlc call failed. status: the C status name ("TLC_ERROR_COMPILE", "TLRT_ERROR_NO_DRIVER", ...);
    diagnostics: the library's text (file:line:col diagnostics for compile and interpreter errors)."""

    def __init__(self, message, status="", diagnostics=""):
        super().__init__(message)
        self.status = status
        self.diagnostics = diagnostics


class CompileError(TlcError):
    """The source did not compile; str(e) and e.diagnostics hold the compiler's diagnostics."""


class InterpreterError(TlcError):
    """The interpreter stopped (out-of-bounds access, a missing or mismatched argument, ...)."""


class LaunchError(TlcError):
    """The runtime refused a module, a kernel or a launch (arguments that do not fit included)."""
