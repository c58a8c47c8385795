import SmartStackCore

@testable import SmartStackProtocol

/// One valid call per method, written as a client would send it.
enum Examples {
    static let weather = "com.example.weather"

    static let registerWeather = """
        {"app":"com.example.weather","kind":"forecast","displayName":"Forecast",
         "families":["systemSmall","systemMedium"],
         "intent":{"type":"SelectCityIntent","parameters":[
            {"name":"city","type":"entity","title":"City","default":"berlin",
             "suggestedEntities":[{"id":"berlin","displayName":"Berlin"},{"id":"paris"}]},
            {"name":"units","type":"enum","cases":[{"id":"metric","displayName":"Metric"},{"id":"imperial"}],
             "default":"metric"},
            {"name":"days","type":"int","optional":true},
            {"name":"wind","type":"measurement","optional":true},
            {"name":"budget","type":"currency","optional":true},
            {"name":"when","type":"date","optional":true},
            {"name":"long","type":"bool","default":"false"}]},
         "predictionMapping":[{"intent":"ViewForecastIntent","parameters":{"place":"city"}}],
         "date":"2024-03-04T08:00:00-08:00"}
        """

    static let registerNotes = #"{"app":"com.example.notes","kind":"main","families":["systemMedium"]}"#

    static let configureHome = """
        {"stack":"home","family":"systemMedium","widgets":[
            {"instance":"w1","app":"com.example.weather","kind":"forecast",
             "configuration":{"city":{"id":"paris","displayName":"Paris"},"days":3,"wind":"12.5 km/h",
                              "budget":{"amount":9.99,"code":"EUR"},"when":"2024-03-05T09:00:00Z","long":true}},
            {"instance":"w2","app":"com.example.notes","kind":"main"},
            {"instance":"w3","app":"com.example.weather","kind":"forecast","configuration":{"units":"imperial"}}],
         "smartRotate":true,"suggestions":false,"pinned":null,"developerMode":true,"liveActivities":true,
         "date":"2024-03-04T08:01:00-08:00"}
        """

    static let calls: [SmartStackMethod: String] = [
        .getInfo: "{}",
        .getInterfaceDescription: #"{"interface":"io.smartstack.Shell"}"#,
        .registerWidget: registerWeather,
        .donate: """
        {"app":"com.example.weather","intent":"ViewForecastIntent","parameters":{"place":"paris"},
         "date":"2024-03-04T08:05:00-08:00","id":"d1","groupId":"trip"}
        """,
        .deleteDonations: #"{"app":"com.example.weather","intent":"ViewForecastIntent","entity":"paris"}"#,
        .listDonations: #"{"app":"com.example.weather","after":"d1","limit":10}"#,
        .submitTimeline: """
        {"app":"com.example.weather","kind":"forecast","instance":"w1",
         "entries":[{"date":"2024-03-04T09:00:00-08:00","relevance":{"score":2,"duration":3600}},
                    {"date":"2024-03-04T09:02:00-08:00","relevance":null},
                    {"date":"2024-03-04T08:30:00-08:00","relevance":{"score":0.5,"duration":0}}],
         "policy":{"kind":"after","date":"2024-03-04T12:00:00-08:00"},"date":"2024-03-04T08:10:00-08:00"}
        """,
        .reloadTimelines: #"{"app":"com.example.weather","kind":"forecast","date":"2024-03-04T08:20:00-08:00"}"#,
        .watchReloads: #"{"app":"com.example.weather","includeWithheld":true}"#,
        .startLiveActivity: """
        {"app":"com.example.weather","id":"storm","attributes":{"region":"north"},
         "contentState":{"level":"2"},"date":"2024-03-04T08:15:00-08:00"}
        """,
        .updateLiveActivity: #"{"app":"com.example.weather","id":"storm","contentState":{"level":"3"}}"#,
        .endLiveActivity: #"{"app":"com.example.weather","id":"storm","contentState":null,"dismissAfter":600}"#,
        .declareRelevance: """
        {"app":"com.example.weather","kind":"forecast","configuration":{"city":"paris","units":"metric"},
         "contexts":[{"start":"2024-03-04T09:00:00Z","end":"2024-03-04T10:00:00Z"},
                     {"key":"location","value":"home"}],"group":"weather"}
        """,
        .configureStack: configureHome,
        .changeStack: """
        {"stack":"home","developerMode":false,"pin":"w4","remove":["w3"],
         "add":[{"instance":"w4","app":"com.example.notes","kind":"main"}],"order":["w4","w1","w2"],
         "date":"2024-03-04T08:05:00-08:00"}
        """,
        .getStack: #"{"stack":"home","at":"2024-03-04T09:30:00-08:00"}"#,
        .subscribe: #"{"stacks":["home","work","home"]}"#,
        .listStacks: "{}",
        .removeStack: #"{"stack":"home","date":"2024-03-04T10:00:00Z"}"#,
        .recordEngagement: #"{"stack":"home","instance":"w1","kind":"impression","duration":2.5}"#,
        .recordLook: #"{"stack":"home"}"#,
        .setContext: #"{"key":"location","value":"home","date":"2024-03-04T08:00:00+01:00"}"#,
        .explain: #"{"stack":"home","instance":"w1"}"#,
        .getBudget: #"{"instance":"w1","at":"2024-03-04T09:30:00-08:00"}"#,
        .getStatistics: "{}",
        .setLogLevel: #"{"level":"debug"}"#,
        .listAppOwners: "{}",
        .releaseApp: #"{"app":"org.example.mail"}"#,
    ]
}
