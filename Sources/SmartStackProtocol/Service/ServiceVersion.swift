/// The service's version, reported by `GetInfo` and by `--version` of smartstackd, smartstackctl and
/// smartstack-desktop.
public enum ServiceVersion {
    public static let current = "0.3.0"
}
