;;; emacs_model_test.el --- shiro-model in batch Emacs  -*- lexical-binding: t; -*-
;; Run by tests/clients/test_emacs_model.py (issue 39): shiro-model picks from shiro.models with
;; completing-read (answered from stdin), the next turn runs on it; "/model default" goes back.

(load (expand-file-name "emacs_harness.el" (file-name-directory load-file-name)) nil t)

(test-run
 (lambda (_workspace)
   (shiro-chat)
   ;; The minibuffer reads "fake-model-large" from stdin (test_emacs_model.py wrote it).
   (test-put :picked (plist-get (call-interactively #'shiro-model) :model))
   (test-await-turn (plist-get (shiro-send "hello") :turnId))
   (shiro-send "/model default")
   (test-put :back (plist-get (shiro--command "shiro.status") :model))
   (test-put :chat (test-chat-text))
   (shiro-stop)
   (test-put :ok t)))
