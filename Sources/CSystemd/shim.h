// The parts of libsystemd that smartstackd uses: sd-daemon (notify, watchdog,
// listen fds) and sd-journal (the native journal protocol).
//
// No helpers are needed: the functions used are not variadic. The variadic
// sd_journal_send() and sd_notifyf() are deliberately unused; Swift builds
// the iovec array for sd_journal_sendv() and the state string for sd_notify()
// itself. SD_LISTEN_FDS_START is a plain integer macro, which Swift imports.
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
