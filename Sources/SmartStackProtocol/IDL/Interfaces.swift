/// One interface the service implements: its definition file, as `GetInterfaceDescription` serves it.
public struct VarlinkInterfaceDefinition: Sendable {
    /// The interface's name, such as `io.smartstack.Shell`.
    public var name: String
    /// The exact text of the interface file in `Sources/SmartStackProtocol/Interfaces`.
    public var text: String
    /// The methods' names as declared, such as `GetStack`.
    public var methods: [String]
    /// The parsed definition; `nil` only if the file does not parse, which the tests rule out.
    public var parsed: VarlinkIDL.Interface?

    /// Parses `text`, taking the name and the methods from it.
    public init(text: String) {
        self.text = text
        let parsed = try? VarlinkIDL.parse(text)
        self.parsed = parsed
        self.name = parsed?.name ?? ""
        self.methods = parsed?.methods.map(\.name) ?? []
    }

    /// Whether `method` streams (must be called with `more`): `Subscribe` and `WatchReloads`.
    public func isStreaming(_ method: some StringProtocol) -> Bool {
        SmartStackMethod(rawValue: "\(name).\(method)")?.isStreaming ?? false
    }
}

/// The interfaces smartstackd implements, embedded in the binary from the interface files.
public enum VarlinkInterfaces {
    /// `org.varlink.service`, `io.smartstack.Provider`, `io.smartstack.Shell` and `io.smartstack.Admin`.
    public static let all: [VarlinkInterfaceDefinition] = [
        PackageResources.org_varlink_service_varlink,
        PackageResources.io_smartstack_Provider_varlink,
        PackageResources.io_smartstack_Shell_varlink,
        PackageResources.io_smartstack_Admin_varlink,
    ].map { VarlinkInterfaceDefinition(text: String(decoding: $0, as: UTF8.self)) }

    /// The names of every interface, as `GetInfo` lists them.
    public static var names: [String] { all.map(\.name) }

    /// The interface named `name`, if the service implements it.
    public static func definition(named name: some StringProtocol) -> VarlinkInterfaceDefinition? {
        all.first { $0.name == name }
    }
}
