;;; emacs_subagent_approval_test.el --- who asks an approval, in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_subagent_approval.py: a `task` subagent's approval and the
;; main agent's, both denied; the minibuffer prompts and the chat buffer are recorded.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(defvar test-prompts nil)

(test-run
 (lambda (workspace)
   (setq shiro-settings '(:approvals "ask" :sandbox "off"))
   (find-file (expand-file-name "hello.py" workspace))
   (shiro-chat)
   (setq shiro-approval-function
         (lambda (title tool)
           (cl-letf (((symbol-function 'read-char-choice)
                      (lambda (prompt _chars) (push prompt test-prompts) ?n)))
             (shiro-ask-approval title tool))))
   (test-await-turn (plist-get (shiro-send "what does the page say?") :turnId))
   (test-put :prompts (vconcat (reverse test-prompts)))
   (test-put :chat (test-chat-text))
   (shiro-stop)
   (test-put :ok t)))
