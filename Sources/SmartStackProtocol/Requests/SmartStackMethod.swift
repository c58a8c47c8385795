public import SmartStackCore

/// Every method of the four interfaces, by its fully qualified name.
public enum SmartStackMethod: String, CaseIterable, Sendable, Hashable {
    case getInfo = "org.varlink.service.GetInfo"
    case getInterfaceDescription = "org.varlink.service.GetInterfaceDescription"

    case registerWidget = "io.smartstack.Provider.RegisterWidget"
    case donate = "io.smartstack.Provider.Donate"
    case deleteDonations = "io.smartstack.Provider.DeleteDonations"
    case listDonations = "io.smartstack.Provider.ListDonations"
    case submitTimeline = "io.smartstack.Provider.SubmitTimeline"
    case reloadTimelines = "io.smartstack.Provider.ReloadTimelines"
    case watchReloads = "io.smartstack.Provider.WatchReloads"
    case startLiveActivity = "io.smartstack.Provider.StartLiveActivity"
    case updateLiveActivity = "io.smartstack.Provider.UpdateLiveActivity"
    case endLiveActivity = "io.smartstack.Provider.EndLiveActivity"
    case declareRelevance = "io.smartstack.Provider.DeclareRelevance"

    case configureStack = "io.smartstack.Shell.ConfigureStack"
    case changeStack = "io.smartstack.Shell.ChangeStack"
    case getStack = "io.smartstack.Shell.GetStack"
    case subscribe = "io.smartstack.Shell.Subscribe"
    case listStacks = "io.smartstack.Shell.ListStacks"
    case removeStack = "io.smartstack.Shell.RemoveStack"
    case recordEngagement = "io.smartstack.Shell.RecordEngagement"
    case recordLook = "io.smartstack.Shell.RecordLook"
    case setContext = "io.smartstack.Shell.SetContext"
    case explain = "io.smartstack.Shell.Explain"
    case getBudget = "io.smartstack.Shell.GetBudget"

    case getStatistics = "io.smartstack.Admin.GetStatistics"
    case setLogLevel = "io.smartstack.Admin.SetLogLevel"
    case listAppOwners = "io.smartstack.Admin.ListAppOwners"
    case releaseApp = "io.smartstack.Admin.ReleaseApp"

    /// The method named `rawValue` (fully qualified), found with one hash: every call is looked up.
    public init?(rawValue: String) {
        guard let method = Self.byName[rawValue] else { return nil }
        self = method
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The interface, such as `io.smartstack.Shell`.
    public var interface: String {
        guard let dot = rawValue.lastIndex(of: ".") else { return rawValue }
        return String(rawValue[..<dot])
    }

    /// The method's own name, such as `GetStack`.
    public var name: String {
        guard let dot = rawValue.lastIndex(of: ".") else { return rawValue }
        return String(rawValue[rawValue.index(after: dot)...])
    }

    /// Streams replies and must be called with `more` (otherwise `org.varlink.service.ExpectedMore`).
    public var isStreaming: Bool { requestType.streams }

    /// Records something in the engine (so it takes an optional `date`).
    public var records: Bool { requestType.records }

    /// Who may call it.
    public var access: MethodAccess { requestType.access }

    /// The request type that decodes the method's parameters.
    public var requestType: any VarlinkMethodRequest.Type {
        switch self {
        case .getInfo: GetInfoRequest.self
        case .getInterfaceDescription: GetInterfaceDescriptionRequest.self
        case .registerWidget: RegisterWidgetRequest.self
        case .donate: DonateRequest.self
        case .deleteDonations: DeleteDonationsRequest.self
        case .listDonations: ListDonationsRequest.self
        case .submitTimeline: SubmitTimelineRequest.self
        case .reloadTimelines: ReloadTimelinesRequest.self
        case .watchReloads: WatchReloadsRequest.self
        case .startLiveActivity: StartLiveActivityRequest.self
        case .updateLiveActivity: UpdateLiveActivityRequest.self
        case .endLiveActivity: EndLiveActivityRequest.self
        case .declareRelevance: DeclareRelevanceRequest.self
        case .configureStack: ConfigureStackRequest.self
        case .changeStack: ChangeStackRequest.self
        case .getStack: GetStackRequest.self
        case .subscribe: SubscribeRequest.self
        case .listStacks: ListStacksRequest.self
        case .removeStack: RemoveStackRequest.self
        case .recordEngagement: RecordEngagementRequest.self
        case .recordLook: RecordLookRequest.self
        case .setContext: SetContextRequest.self
        case .explain: ExplainRequest.self
        case .getBudget: GetBudgetRequest.self
        case .getStatistics: GetStatisticsRequest.self
        case .setLogLevel: SetLogLevelRequest.self
        case .listAppOwners: ListAppOwnersRequest.self
        case .releaseApp: ReleaseAppRequest.self
        }
    }
}

/// Who may call a method; `AccessControl` maps each to the keys of the system policy.
public enum MethodAccess: Sendable, Hashable {
    /// `org.varlink.service`: anyone who may connect.
    case introspection
    /// Reading stacks: shells and admins.
    case shellReads
    /// Configuring stacks and recording what the user did: shells.
    case shellWrites
    /// Acting for an app (`ProviderRequest.app`): providers, or the policy's `app.ID` lines.
    case provider
    /// Administration: admins.
    case admin
}

/// One method, declared in one place: its name (`method`), who may call it, whether it records or streams, its
/// strict decoding, its encoding for clients, and its case among all requests. The interface file gives its
/// text; the server's `ServiceDispatcher` gives its handler (a `switch` the compiler checks is exhaustive).
public protocol VarlinkMethodRequest: Sendable {
    /// The method this request is for.
    static var method: SmartStackMethod { get }
    /// Who may call it.
    static var access: MethodAccess { get }
    /// Records something in the engine: takes an optional `date`, and a provider's call counts against its
    /// app's rate limit. `false` unless declared.
    static var records: Bool { get }
    /// Streams replies and must be called with `more`. `false` unless declared.
    static var streams: Bool { get }
    /// Decodes and checks the parameters; every error is a reply naming the parameter's full path.
    init(parameters: JSONObject) throws(VarlinkError)
    /// The parameters as a client sends them (absent optionals left out): `Self(parameters: wireParameters)`
    /// reads back the same request. The typed client (`VarlinkClient.call(_:)`) sends these.
    var wireParameters: JSONObject { get }
    /// The app a provider call acts for; `nil` for other methods.
    var actingApp: AppID? { get }
    /// This request as a call of any method.
    var anyRequest: SmartStackRequest { get }
    /// Decodes `parameters` as this method's call (`Self(parameters:).anyRequest`; a requirement so that each
    /// method's decoding is specialized, with no generic code on the hot path).
    static func decodeAny(_ parameters: JSONObject) throws(VarlinkError) -> SmartStackRequest
    /// Whether `decodePlain` can read some calls of this method (`false` unless declared): only then does the
    /// envelope's fast path look for plain parameters.
    static var takesPlainParameters: Bool { get }
    /// The request read straight from parameters that are all plain strings (`PlainParameters`), when they are
    /// exactly what this method expects and valid; `nil` for anything else, which the general decoding
    /// (`init(parameters:)`) then reads and names. Both give the same request for the same parameters.
    static func decodePlain(_ parameters: PlainParameters) -> SmartStackRequest?
}

/// A method of `io.smartstack.Provider`: it acts for an app, which the caller must be allowed to act for.
public protocol ProviderRequest: VarlinkMethodRequest {
    var app: AppID { get }
}

extension ProviderRequest {
    public var actingApp: AppID? { app }
}

extension VarlinkMethodRequest {
    public static var records: Bool { false }
    public static var streams: Bool { false }
    public var actingApp: AppID? { nil }

    public static func decodeAny(_ parameters: JSONObject) throws(VarlinkError) -> SmartStackRequest {
        try Self(parameters: parameters).anyRequest
    }

    public static var takesPlainParameters: Bool { false }
    public static func decodePlain(_ parameters: PlainParameters) -> SmartStackRequest? { nil }

    /// Maps a Core error to this method's interface (`VarlinkError.init(_:interface:)`).
    static func wire(_ error: CoreError) -> VarlinkError { VarlinkError(error, interface: method.interface) }

    /// Runs Core code, mapping its errors to this method's interface with their paths under `prefix`.
    static func core<T>(under prefix: String = "", _ body: () throws(CoreError) -> T) throws(VarlinkError) -> T {
        do throws(CoreError) {
            return try body()
        } catch {
            throw wire(error.underPath(prefix))
        }
    }
}

/// A decoded call of any method: decode once, then switch with one handler per method.
public enum SmartStackRequest: Sendable {
    case getInfo(GetInfoRequest)
    case getInterfaceDescription(GetInterfaceDescriptionRequest)
    case registerWidget(RegisterWidgetRequest)
    case donate(DonateRequest)
    case deleteDonations(DeleteDonationsRequest)
    case listDonations(ListDonationsRequest)
    case submitTimeline(SubmitTimelineRequest)
    case reloadTimelines(ReloadTimelinesRequest)
    case watchReloads(WatchReloadsRequest)
    case startLiveActivity(StartLiveActivityRequest)
    case updateLiveActivity(UpdateLiveActivityRequest)
    case endLiveActivity(EndLiveActivityRequest)
    case declareRelevance(DeclareRelevanceRequest)
    case configureStack(ConfigureStackRequest)
    case changeStack(ChangeStackRequest)
    case getStack(GetStackRequest)
    case subscribe(SubscribeRequest)
    case listStacks(ListStacksRequest)
    case removeStack(RemoveStackRequest)
    case recordEngagement(RecordEngagementRequest)
    case recordLook(RecordLookRequest)
    case setContext(SetContextRequest)
    case explain(ExplainRequest)
    case getBudget(GetBudgetRequest)
    case getStatistics(GetStatisticsRequest)
    case setLogLevel(SetLogLevelRequest)
    case listAppOwners(ListAppOwnersRequest)
    case releaseApp(ReleaseAppRequest)

    /// Decodes a call: `InterfaceNotFound` for an interface the service does not implement, `MethodNotFound`
    /// for a method its interface does not declare, `ExpectedMore` for a streaming method called without
    /// `more`, `InvalidParameter {parameter: "upgrade"}` for a call asking to upgrade the connection, then the
    /// request type's own `InvalidParameter` errors.
    public init(call: VarlinkCall) throws(VarlinkError) {
        guard let method = call.known else {
            let interface = String(call.interface)
            guard VarlinkInterfaces.definition(named: interface) != nil else { throw .interfaceNotFound(interface) }
            throw .methodNotFound(call.method)
        }
        if method.isStreaming, !call.more { throw .expectedMore() }
        // A reply that looked like a confirmation would leave a caller speaking its other protocol to a Varlink
        // server: refused, the connection kept.
        if call.upgrade {
            throw .invalidParameter("upgrade", reason: "no method of this service upgrades the connection")
        }
        if let decoded = call.decodedBox {
            self = decoded.request
            return
        }
        self = try method.requestType.decodeAny(call.parameters)
    }

    /// What a message decoded to, as text: its framing error; or its request (the method, the parameters as a client
    /// sends them) with the call's `oneway` and `more`; or the error the request gets. Two decodings of one message
    /// agree when these are equal: the tests and `fuzz-wire` check `VarlinkCall(bytes:)`, with its fast paths, against
    /// `VarlinkCall(general:)` with it.
    public static func summary(of decoded: Result<VarlinkCall, VarlinkFramingError>) -> String {
        let call: VarlinkCall
        switch decoded {
        case .failure(let error): return "framing: \(error)"
        case .success(let decoded): call = decoded
        }
        do throws(VarlinkError) {
            let request = try SmartStackRequest(call: call)
            let parameters = String(decoding: JSON.serialize(.object(request.wireParameters)), as: UTF8.self)
            return "\(request.method) \(parameters) oneway \(call.oneway) more \(call.more)"
        } catch {
            let parameters = String(decoding: JSON.serialize(.object(error.parameters)), as: UTF8.self)
            return "error: \(error.name) \(parameters)"
        }
    }

    /// Calls `visitor` with the request of whichever method this is: the one switch over the methods that
    /// everything else about a request is derived from.
    public func visit<Visitor: SmartStackRequestVisitor>(_ visitor: Visitor) -> Visitor.Result {
        switch self {
        case .getInfo(let request): visitor.visit(request)
        case .getInterfaceDescription(let request): visitor.visit(request)
        case .registerWidget(let request): visitor.visit(request)
        case .donate(let request): visitor.visit(request)
        case .deleteDonations(let request): visitor.visit(request)
        case .listDonations(let request): visitor.visit(request)
        case .submitTimeline(let request): visitor.visit(request)
        case .reloadTimelines(let request): visitor.visit(request)
        case .watchReloads(let request): visitor.visit(request)
        case .startLiveActivity(let request): visitor.visit(request)
        case .updateLiveActivity(let request): visitor.visit(request)
        case .endLiveActivity(let request): visitor.visit(request)
        case .declareRelevance(let request): visitor.visit(request)
        case .configureStack(let request): visitor.visit(request)
        case .changeStack(let request): visitor.visit(request)
        case .getStack(let request): visitor.visit(request)
        case .subscribe(let request): visitor.visit(request)
        case .listStacks(let request): visitor.visit(request)
        case .removeStack(let request): visitor.visit(request)
        case .recordEngagement(let request): visitor.visit(request)
        case .recordLook(let request): visitor.visit(request)
        case .setContext(let request): visitor.visit(request)
        case .explain(let request): visitor.visit(request)
        case .getBudget(let request): visitor.visit(request)
        case .getStatistics(let request): visitor.visit(request)
        case .setLogLevel(let request): visitor.visit(request)
        case .listAppOwners(let request): visitor.visit(request)
        case .releaseApp(let request): visitor.visit(request)
        }
    }

    /// The method called.
    public var method: SmartStackMethod { visit(MethodOf()) }

    /// The app a provider call acts for; `nil` for other calls.
    public var actingApp: AppID? { visit(AppOf()) }

    /// The request's parameters as a client sends them (`VarlinkMethodRequest.wireParameters`).
    public var wireParameters: JSONObject { visit(WireParametersOf()) }

    private struct WireParametersOf: SmartStackRequestVisitor {
        func visit<Request: VarlinkMethodRequest>(_ request: Request) -> JSONObject { request.wireParameters }
    }

    private struct MethodOf: SmartStackRequestVisitor {
        func visit<Request: VarlinkMethodRequest>(_: Request) -> SmartStackMethod { Request.method }
    }

    private struct AppOf: SmartStackRequestVisitor {
        func visit<Request: VarlinkMethodRequest>(_ request: Request) -> AppID? { request.actingApp }
    }
}

/// Something done with a request of any method (`SmartStackRequest.visit`).
public protocol SmartStackRequestVisitor {
    associatedtype Result
    func visit<Request: VarlinkMethodRequest>(_ request: Request) -> Result
}
