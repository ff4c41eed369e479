;;; emacs_plan_test.el --- plan mode in clients/emacs, batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_plan.py (the fake provider scripted there); writes JSON to
;; $SHIRO_EMACS_OUT.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(test-run
 (lambda (workspace)
   (setq shiro-settings '(:approvals "ask"))
   (find-file (expand-file-name "hello.py" workspace))
   (shiro-chat)
   (shiro-plan-mode)
   (test-put :modeAfterToggle (plist-get (shiro--command "shiro.status") :mode))
   (test-wait (lambda () (shiro-plan-p)) "plan mode")
   (test-put :modeLine (shiro-mode-line))
   (shiro-send "add a file")
   (test-ended-count 1)
   (test-put :existsAfterPlan (if (file-exists-p (expand-file-name "new.txt" workspace)) "yes" "no"))
   (test-put :chatAfterPlan (test-chat-text))
   (shiro-start-plan "auto-edit")
   (test-wait (lambda () (not (shiro-plan-p))) "act mode")
   (test-ended-count 2)
   (test-put :modeLineAct (shiro-mode-line))
   (test-put :newTxt (with-temp-buffer (insert-file-contents (expand-file-name "new.txt" workspace)) (buffer-string)))
   (test-put :chatAfterStart (test-chat-text))
   (shiro-stop))
 :hook-depth 90 :describe-error #'error-message-string)
