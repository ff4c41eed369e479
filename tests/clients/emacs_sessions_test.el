;;; emacs_sessions_test.el --- saved sessions in clients/emacs, batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_sessions.py (the fake provider scripted there); writes JSON to
;; $SHIRO_EMACS_OUT.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(defvar test-offered nil "What completing-read offered, newest first.")

(defun test-pick (want)
  "A `completing-read' that records its choices and picks the one holding WANT."
  (lambda (_prompt choices &rest _)
    (let ((labels (mapcar (lambda (c) (if (consp c) (car c) c)) choices)))
      (push labels test-offered)
      (or (cl-find-if (lambda (l) (string-search want l)) labels) (error "no choice holds %s" want)))))

(test-run
 (lambda (workspace)
   (setq shiro-settings '(:approvals "ask"))
   (find-file (expand-file-name "hello.py" workspace))
   (shiro-chat)
   (shiro-send "why is the invoice total off by a cent?")
   (test-ended-count 1)
   (test-put :first (plist-get (shiro--command "shiro.status") :sessionId))
   (shiro-new-session)
   (shiro-send "speed up the build")
   (test-ended-count 2)
   (cl-letf (((symbol-function 'completing-read) (test-pick "narwhal")))
     (shiro-search-sessions "narwhal"))
   (test-put :searchOffered (car test-offered))
   (test-put :current (plist-get (shiro--command "shiro.status") :sessionId))
   (shiro-rename-session "Invoice rounding")
   (test-put :exported (with-current-buffer (shiro-export-session) (buffer-string)))
   (cl-letf (((symbol-function 'completing-read) (test-pick "speed up the build"))
             ((symbol-function 'yes-or-no-p) (lambda (_) t)))
     (call-interactively #'shiro-delete-session))
   (test-put :files (mapcar #'file-name-base (directory-files (expand-file-name "sessions" (getenv "SHIRO_NEKO_HOME")) nil "\\.json\\'")))
   (shiro-stop))
 :hook-depth 90 :describe-error #'error-message-string)
