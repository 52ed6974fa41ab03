// apphome-secret-service: `apphome` linked dynamically, for the verbs that may
// reach the Secret Service through libsecret; the static `apphome` runs it with
// the same arguments (AppHomeMain).
import AppHomeCommand

AppHomeMain.run(handsOffSecretService: false)
