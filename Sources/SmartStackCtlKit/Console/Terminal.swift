#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the process writes to: whether a stream is a terminal, and whether colour is wanted.
public struct Terminal: Sendable, Hashable {
    /// Whether standard output is a terminal.
    public var outputIsTerminal: Bool
    /// Whether standard error is a terminal.
    public var errorIsTerminal: Bool
    /// Whether `NO_COLOR` is set to anything non-empty (no-color.org), or `TERM` is `dumb`.
    public var colourRefused: Bool

    public init(outputIsTerminal: Bool, errorIsTerminal: Bool, colourRefused: Bool) {
        self.outputIsTerminal = outputIsTerminal
        self.errorIsTerminal = errorIsTerminal
        self.colourRefused = colourRefused
    }

    /// The process's own standard output and error, and its environment.
    public static func current() -> Terminal {
        let noColour = getenv("NO_COLOR").map { String(cString: $0) } ?? ""
        let term = getenv("TERM").map { String(cString: $0) } ?? ""
        return Terminal(
            outputIsTerminal: isatty(STDOUT_FILENO) == 1, errorIsTerminal: isatty(STDERR_FILENO) == 1,
            colourRefused: !noColour.isEmpty || term == "dumb")
    }

    /// The style for standard output: colour only on a terminal that does not refuse it.
    public var outputStyle: Style { Style(enabled: outputIsTerminal && !colourRefused) }
    /// The style for standard error.
    public var errorStyle: Style { Style(enabled: errorIsTerminal && !colourRefused) }
}

/// Writes text to standard output or standard error without buffering surprises.
public enum Output {
    /// Writes `text` and a newline to standard output.
    public static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes `text` and a newline to standard error.
    public static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` as is to a descriptor, retrying short writes.
    public static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }
}
