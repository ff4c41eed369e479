;;; emacs_permissions_test.el --- permission rules in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_permissions.py: an approval answered with f (always in this
;; folder), then `shiro-permissions' lists the rule and removes it.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(test-run
 (lambda (workspace)
   (setq shiro-settings '(:approvals "ask" :sandbox "off"))
   (find-file (expand-file-name "hello.py" workspace))
   (shiro-chat)
   (setq read-char-choice-use-read-key t)
   (setq shiro-approval-function
         (lambda (title tool)
           (setq unread-command-events (list ?f))
           (shiro-ask-approval title tool)))
   (test-await-turn (plist-get (shiro-send "run it") :turnId))
   (test-put :listed (mapcar #'shiro--rule-label (shiro-permissions)))
   (cl-letf (((symbol-function 'yes-or-no-p) (lambda (_prompt) t)))
     (shiro-permissions "allow Bash(echo one two:*) (workspace)"))
   (test-put :after (mapcar #'shiro--rule-label (shiro-permissions)))
   (test-put :chat (test-chat-text))
   (shiro-stop)
   (test-put :ok t)))
