import SmartStackClient
import SmartStackCtlKit
import SmartStackProtocol
import Testing

/// Replies rendered for people, from replies shaped like the service's.
struct RenderTests {
    static func object(_ text: String) throws -> JSONObject {
        try #require(try JSON.parse(Array(text.utf8)).objectValue)
    }

    static let explain = """
        {"stack":"home","revision":4,"date":"2026-11-21T09:00:00.000+01:00",
         "order":[{"instance":"weather","position":0,"score":1.21,"suggested":false,"pinned":false,"reason":"relevance",
                   "contributions":{"relevance":1.0,"recency":-0.4},"app":"org.example.weather","kind":"forecast"},
                  {"instance":"mail","position":1,"score":0.79,"suggested":false,"pinned":true,"reason":"pinned",
                   "contributions":{"recency":0.4},"app":"org.example.mail","kind":"inbox"},
                  {"instance":"suggestion:org.example.maps/nearby","position":2,"score":0.3,"suggested":true,
                   "pinned":false,"reason":"suggestion","contributions":{"frequency":0.2},"app":"org.example.maps",
                   "kind":"nearby"}],
         "smartRotate":true,"suggestions":true,"developerMode":false,"lastRotation":"2026-11-21T08:58:00.000+01:00",
         "nextRotationAllowed":"2026-11-21T09:03:00.000+01:00","learnedFromLooks":12,
         "widgets":[{"instance":"mail","app":"org.example.mail","kind":"inbox","position":1,"reason":"pinned",
                     "score":0.79,"behaviour":0.79,"relevance":0,"contributions":{"recency":0.4},
                     "relevanceState":{"status":"none","score":0,"normalized":0},"suppressedByGroup":false,
                     "rotationLimited":false,"rotationsToday":0,"rotationsLeftToday":8,"pinned":true,
                     "budget":{"capacity":70,"used":0,"left":70,"nextAvailable":"2026-11-21T09:00:00.000+01:00"}},
                    {"instance":"weather","app":"org.example.weather","kind":"forecast","position":0,
                     "reason":"relevance","score":1.21,"behaviour":0.21,"relevance":1.0,
                     "contributions":{"relevance":1.0,"recency":-0.4},
                     "relevanceState":{"status":"relevant","score":80,"normalized":1,
                                       "since":"2026-11-21T08:58:00.000+01:00","expires":"2026-11-21T10:00:00.000+01:00",
                                       "currentEntryDate":"2026-11-21T08:58:00.000+01:00"},
                     "relevantContext":0,"relevanceGroup":"travel","suppressedByGroup":false,"rotationLimited":false,
                     "rotationsToday":3,"rotationsLeftToday":5,"timeOnTop":120.0,"pinned":false,
                     "manualSwipeUntil":null,
                     "budget":{"capacity":70,"used":70,"left":0,"nextAvailable":"2026-11-21T11:00:00.000+01:00"},
                     "nextReload":"2026-11-21T11:00:00.000+01:00"}]}
        """

    @Test func explainSaysWhenASimpleRankerOrdersTheStack() throws {
        let text = Self.explain.replacing(
            "\"learnedFromLooks\":12,",
            with: "\"learnedFromLooks\":12,\"ranker\":\"mru\",\"rankerPerformance\":{\"model\":10.5,\"mru\":12.0},")
        let lines = ExplainRenderer.render(try Self.object(text)).split(separator: "\n").map(String.init)
        #expect(
            lines[1] == "Smart Rotate on · Widget Suggestions on · developer mode off · learned from 12 looks"
                + " · ordered by the mru fallback (it has recently predicted better)")
        let model = Self.explain.replacing(
            "\"learnedFromLooks\":12,", with: "\"learnedFromLooks\":12,\"ranker\":\"model\",")
        #expect(!ExplainRenderer.render(try Self.object(model)).contains("fallback"))
    }

    @Test func explainPrintsASuggestionWithoutAPositionAsUnplaced() throws {
        let text = Self.explain.replacing(
            "{\"instance\":\"suggestion:org.example.maps/nearby\",\"position\":2,",
            with: "{\"instance\":\"suggestion:org.example.maps/nearby\",")
        #expect(text != Self.explain)
        #expect(ExplainRenderer.render(try Self.object(text)).contains("?. suggestion:org.example.maps/nearby"))
    }

    @Test func explainSaysWhichTopIsHeldAndByWhatMargin() throws {
        let held = Self.explain.replacing(
            "\"learnedFromLooks\":12,", with: "\"learnedFromLooks\":12,\"holdMargin\":1.5,\"heldTop\":\"mail\",")
        let lines = ExplainRenderer.render(try Self.object(held)).split(separator: "\n").map(String.init)
        #expect(lines[2] == "mail held on top: a challenger is likelier, but not 1.500 times as likely")
        let unheld = Self.explain.replacing(
            "\"learnedFromLooks\":12,", with: "\"learnedFromLooks\":12,\"holdMargin\":1.3,\"heldTop\":null,")
        #expect(!ExplainRenderer.render(try Self.object(unheld)).contains("held on top"))
        // Under a Live Activity, the held widget is first among the widgets: not "on top" (its block says so).
        let underActivity = held.replacing(
            "\"order\":[{",
            with: "\"order\":[{\"instance\":\"liveActivity:org.example.ride/r1\",\"position\":0,"
                + "\"score\":0,\"suggested\":false,\"pinned\":false,\"reason\":\"liveActivity\"},{")
        #expect(underActivity != held)
        let activityLines = ExplainRenderer.render(try Self.object(underActivity)).split(separator: "\n")
        #expect(
            activityLines[2]
                == "mail held first among the widgets (below the Live Activities): a challenger is likelier, but not "
                + "1.500 times as likely")
    }

    @Test func explainShowsEveryInput() throws {
        let text = ExplainRenderer.render(try Self.object(Self.explain))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Stack home · revision 4 · explained at 2026-11-21 09:00:00")
        #expect(lines[1] == "Smart Rotate on · Widget Suggestions on · developer mode off · learned from 12 looks")
        #expect(lines[2] == "last rotation 08:58:00 (2min ago) · next rotation allowed 09:03:00 (in 3min)")
        #expect(text.contains("1  weather                             1.210      0.210      1.000  relevance\n"))
        #expect(
            text.contains("2  mail                                0.790      0.790      0.000  pinned      pinned\n"))
        #expect(
            text.contains("3  suggestion:org.example.maps/nearby  0.300          -          -  suggestion  suggested\n")
        )
        // Widgets in order of position, each with every input.
        let weather = try #require(text.firstRange(of: "1. weather (org.example.weather / forecast)"))
        let mail = try #require(text.firstRange(of: "2. mail (org.example.mail / inbox)"))
        #expect(weather.lowerBound < mail.lowerBound)
        #expect(
            text.contains("Score       1.210 = behaviour 0.210 (chance the user goes to it next) + relevance 1.000"))
        #expect(text.contains("Signals     relevance   +1.00  ████████████████████\n"))
        #expect(text.contains("            recency     -0.40  ████████\n"))
        #expect(
            text.contains(
                "Relevance   relevant: score 80.000, normalised 1.00, since 08:58:00, expires 10:00:00 (in 1h), current entry 08:58:00"
            ))
        #expect(text.contains("relevant context #1 of the provider's list is in force"))
        #expect(text.contains("relevance group travel"))
        #expect(text.contains("Stability   on top for 2min · rotations in the last 24h: 3, 5 left"))
        #expect(
            text.contains(
                "Budget      0 of 70 reloads left (70 used in the last 24h) · next reload possible 11:00:00 (in 2h)"))
        #expect(text.contains("Pinned      yes, kept on top by the shell"))
        #expect(text.contains("3. suggestion:org.example.maps/nearby (suggestion)"))
        #expect(!text.contains("\u{1B}["))
    }

    @Test func orderTable() throws {
        let reply = try Self.object(
            """
            {"stack":"home","revision":2,"date":"2026-11-21T09:00:00.000Z","order":[
             {"instance":"a","position":0,"score":0.6,"suggested":false,"pinned":true,"reason":"pinned",
              "contributions":{"recency":0.5,"frequency":-0.7,"timeOfDay":0.1,"lastApp":0.01},"app":"x","kind":"k"}]}
            """)
        let text = OrderRenderer.render(reply, configuration: ["family": "systemSmall", "smartRotate": false])
        #expect(
            text == """
                home · revision 2 · 2026-11-21 09:00:00
                family systemSmall · Smart Rotate off · suggestions on
                #  WIDGET  APP/KIND  SCORE  REASON  FLAGS   TOP SIGNALS
                1  a       x/k       0.600  pinned  pinned  frequency -0.70 recency +0.50 timeOfDay +0.10
                """)
    }

    @Test func statisticsAndBudget() throws {
        let statistics = StatisticsRenderer.render(
            try Self.object(
                #"{"stacks":2,"widgets":12,"donations":21088,"uptimeSeconds":3725.5,"logLevel":"info","#
                    + #""topApps":[{"app":"org.ex.a","donations":20000},{"app":"org.ex.b","donations":1088}]}"#))
        #expect(statistics.contains("     Donations: 21,088"))
        #expect(statistics.contains("Most donations: org.ex.a 20,000, org.ex.b 1,088"))
        #expect(statistics.contains("        Uptime: 1h 2min"))
        let budget = BudgetRenderer.render(
            try Self.object(#"{"capacity":70,"used":2,"left":68,"nextAvailable":"2026-11-21T09:00:00.000Z"}"#),
            instance: "w")
        #expect(budget == "w: 68 of 70 reloads left (2 used in the last 24h) · a reload is possible now")
    }

    @Test func failuresAndExitStatuses() {
        let unreachable = CtlFailure(
            .connection(
                "cannot connect to /run/x: connect(descriptor:addr:size:): No such file or directory) (errno: 2)"),
            address: "unix:/run/x")
        #expect(unreachable.status == .unavailable)
        #expect(unreachable.status.rawValue == 69)
        let message = unreachable.message()
        #expect(
            message.hasPrefix(
                "smartstackctl: cannot reach smartstackd at unix:/run/x: No such file or directory (errno 2)\n"))
        #expect(message.contains("systemctl status smartstackd"))
        // A path that is not a socket, and a service that did not answer in time: neither is "not running".
        let notSocket = CtlFailure(.connection("cannot connect to /tmp: it is not a socket"), address: "unix:/tmp")
        #expect(
            notSocket.message().hasPrefix("smartstackctl: cannot reach smartstackd at unix:/tmp: it is not a socket\n"))
        #expect(!notSocket.message().contains("Is the service running"))
        let slow = CtlFailure(.connection("connected, but no reply within 0.001 s"), address: "unix:/run/x")
        #expect(slow.message().contains("did not answer: connected, but no reply within 0.001 s"))
        #expect(!slow.message().contains("Is the service running") && slow.message().contains("--timeout"))

        let remote = CtlFailure(
            .remote(VarlinkError(name: "io.smartstack.Shell.NotFound", parameters: ["kind": "stack", "id": "nope"])),
            address: "unix:/run/x")
        #expect(remote.status.rawValue == 2)
        #expect(remote.message() == "smartstackctl: io.smartstack.Shell.NotFound: kind=stack id=nope")
        #expect(remote.jsonDocument?["error"] == .string("io.smartstack.Shell.NotFound"))
        #expect(CtlFailure(.protocolViolation("x"), address: "a").status.rawValue == 76)
        #expect(CtlFailure.badInput("f:3: bad").status.rawValue == 65)
        #expect(CtlFailure.noInput("f").status.rawValue == 66)
        #expect(Set(ExitStatus.allCases.map(\.rawValue)).count == ExitStatus.allCases.count)
    }

    @Test func progressLine() {
        let line = ProgressBar.line(label: "replay", done: 500, total: 1_000, elapsed: 2, width: 10)
        #expect(line == "replay [█████     ] 50%  500/1,000 rows  2.0s  ETA 2.0s")
    }
}
