/// The event types smartstackd writes to the journal, each with its own stable `MESSAGE_ID`.
///
/// `systemd/smartstackd.catalog` explains every ID; a test keeps the two in step.
public enum SmartStackEvent: String, Sendable, CaseIterable {
    /// The service started (before state is loaded).
    case started
    /// State was loaded from the store; the counts are in `SMARTSTACK_*` fields.
    case stateLoaded
    /// Shutdown began (SIGTERM or a stop request).
    case stopping
    /// A stack's published order changed (coalesced: at most one per stack per second, with a count).
    case orderChanged
    /// A suggested widget was inserted into a stack.
    case suggestionInserted
    /// A suggested widget was removed from a stack.
    case suggestionRemoved
    /// The service asked a provider to reload a widget's timeline.
    case reloadRequested
    /// A reload was due but withheld (budget spent, or the widget not visible).
    case reloadWithheld
    /// A client's request was refused by the access policy.
    case clientRejected
    /// The periodic summary with counters.
    case periodicSummary
    /// smartstack-desktop connected (again) to the service manager and logind over D-Bus.
    case desktopBusConnected
    /// smartstack-desktop lost a D-Bus connection and reconnects.
    case desktopBusLost
    /// smartstack-desktop donated an application launch (`SMARTSTACK_APP`, `SMARTSTACK_UNIT`).
    case desktopLaunch
    /// smartstack-desktop changed the apps of its stack.
    case desktopStackChanged
    /// smartstack-desktop recorded a look at its stack on an unlock.
    case desktopLook
    /// smartstack-desktop recorded a look at its stack when GNOME Shell's overview opened.
    case desktopOverviewLook
    /// smartstack-desktop cannot reach smartstackd and retries.
    case desktopDisconnected
    /// smartstack-desktop reached smartstackd again and resent what was not acknowledged.
    case desktopReconnected

    /// The `MESSAGE_ID` of this event type.
    public var messageID: MessageID {
        // Every literal below is 32 lowercase hex digits; a test parses each one to make sure.
        MessageID(uncheckedHex: hexDigits)
    }

    private var hexDigits: String {
        switch self {
        case .started: "e2aae51c9d14455a826564658714b3ab"
        case .stateLoaded: "706cc6d260c848f7a2299011bb4e34f7"
        case .stopping: "aa4ae41e146640ae93ec1e3b90762801"
        case .orderChanged: "040d2f906681431293c211e0a6ef5c64"
        case .suggestionInserted: "aae23b06f80c441c88b40142c14fc332"
        case .suggestionRemoved: "9c657d10b28944d095054ad8aef5d864"
        case .reloadRequested: "a8c214f073314df1b3267b8bd145194c"
        case .reloadWithheld: "e8e74928e7d3428daf2d415ecf85e6e9"
        case .clientRejected: "234a632a5b4149ad9bed534fc82f615e"
        case .periodicSummary: "bdd41a8c415140d7aae33742debafbc3"
        case .desktopBusConnected: "9beb9c376c1346d9a24d8de45927c365"
        case .desktopBusLost: "c1125ae16a6e43c6bab6b85f5cedcd94"
        case .desktopLaunch: "0d56f87b925942e3acac5cdb14e91f48"
        case .desktopStackChanged: "0e94dfab62c446f89bf2aa02fc929f11"
        case .desktopLook: "4386854a752d47eda07159f785b07531"
        case .desktopOverviewLook: "7464a712b6b64007b414e6de2e0ed0c5"
        case .desktopDisconnected: "89dd89b949304815b342012a1f5927ee"
        case .desktopReconnected: "e97158912bb14f01ba149baa756a02d5"
        }
    }

    /// The event type with this `MESSAGE_ID`, if it is one of smartstackd's.
    public init?(messageID: MessageID) {
        guard let event = Self.allCases.first(where: { $0.messageID == messageID }) else { return nil }
        self = event
    }
}
