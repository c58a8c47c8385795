/// Where the service listens and keeps state when nothing says otherwise: a pure function of the
/// environment, so it can be tested without touching the process's own.
public struct ServiceDefaults: Sendable, Hashable {
    /// The socket path.
    public var socketPath: String
    /// The state directory.
    public var stateDirectory: String
    /// Whether this is the system instance (root), whose socket others may reach under the access policy.
    public var isSystem: Bool

    /// The system service's socket (root's default; the system unit's `ListenStream=`).
    public static let systemSocketPath = "/run/smartstack/io.smartstack"

    /// The defaults for a process with this environment and user id.
    ///
    /// - Socket: `$XDG_RUNTIME_DIR/smartstack/io.smartstack` for a user; `/run/smartstack/io.smartstack` for
    ///   root (the system service); `/tmp/smartstack-UID/io.smartstack` for a user without a runtime directory.
    /// - State: `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`); otherwise `/var/lib/smartstack` for
    ///   root and `$XDG_DATA_HOME/smartstack` (or `~/.local/share/smartstack`) for a user.
    ///
    /// `system` overrides the choice by uid: the system unit runs as a transient user (`DynamicUser=`) and
    /// says `--system`.
    public init(environment: [String: String], uid: UInt32, system: Bool? = nil) {
        isSystem = system ?? (uid == 0)
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), !isSystem {
            socketPath = runtime + "/smartstack/io.smartstack"
        } else if isSystem {
            socketPath = Self.systemSocketPath
        } else {
            socketPath = "/tmp/smartstack-\(uid)/io.smartstack"
        }
        if let state = environment["STATE_DIRECTORY"], state.hasPrefix("/") {
            // systemd may pass several, separated by ':'; the first is ours.
            stateDirectory = String(state.split(separator: ":").first ?? Substring(state))
        } else if isSystem {
            stateDirectory = "/var/lib/smartstack"
        } else if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            stateDirectory = data + "/smartstack"
        } else {
            stateDirectory = (environment["HOME"] ?? "/tmp") + "/.local/share/smartstack"
        }
    }
}
