;;; shiro-editor.el --- editor context and intelligence for shiro.el  -*- lexical-binding: t; -*-

;;; Commentary:
;; Issue 38 (docs/editor-intelligence.md):
;; - each prompt carries what the user sees (`shiro-editor-context'): the most recent file buffer of
;;   the project, its point, its active region with the text, the project's file buffers;
;; - `shiro/diagnostics' is answered from flymake (every backend the user runs, eglot's included);
;; - `shiro/navigate' from xref (the buffer's backend: eglot, etags, elisp...);
;; - shiro's code actions (eglot-code-actions lists them) run `shiro.ask' on the server; its
;;   `shiro/focusChat' opens the chat with that context, or for "Edit with shiro-neko…" reads an
;;   instruction, runs `shiro.inlineEdit' and shows the proposal as a diff to accept or reject.
;; `shiro-send-editor-context' nil stops sending the context.

;;; Code:

(require 'shiro)
(require 'flymake)
(require 'xref)
(require 'diff)

(defcustom shiro-send-editor-context t
  "Send the editor context (file, point, region, open files) with each prompt."
  :type 'boolean :group 'shiro)

(defvar shiro-inline-edit-instruction-function
  (lambda () (read-string "Edit with shiro-neko: "))
  "Returns the instruction of an inline edit.")

(defvar shiro-inline-edit-confirm-function
  (lambda () (y-or-n-p "Apply shiro-neko's edit? "))
  "Asked with the diff shown: non-nil accepts the inline edit.")

(defvar shiro--pinned-context nil "A code action's context, sent with the next prompt instead.")
(defvar shiro-inline-edit-last nil "The last inline edit's resolution: (:accept BOOL :applied BOOL).")

(defconst shiro--max-open-files 30)
(defconst shiro--max-selection 20000)
(defconst shiro--max-per-file 200)

(defun shiro--file-buffers ()
  "The project's file buffers, most recently used first."
  (seq-filter (lambda (b)
                (let ((file (buffer-file-name b)))
                  (and file shiro--root (string-prefix-p shiro--root (expand-file-name file)))))
              (buffer-list)))

(defun shiro--range (beg end)
  (list :start (eglot--pos-to-lsp-position beg) :end (eglot--pos-to-lsp-position end)))

(defun shiro-editor-context ()
  "What the user sees, as `shiro.chat''s context (a plist), or nil."
  (if shiro--pinned-context
      (prog1 shiro--pinned-context (setq shiro--pinned-context nil))
    (when-let* ((shiro-send-editor-context)
                (buffer (car (shiro--file-buffers))))
      (with-current-buffer buffer
        (let* ((uri (shiro--uri buffer-file-name))
               (window (get-buffer-window buffer))
               (point (if window (window-point window) (point)))
               (context (list :activeFile uri
                              :cursor (eglot--pos-to-lsp-position point)
                              :openFiles (vconcat (mapcar (lambda (b) (shiro--uri (buffer-file-name b)))
                                                          (seq-take (shiro--file-buffers) shiro--max-open-files))))))
          (when window
            (setq context (plist-put context :visibleRange
                                     (list :uri uri :range (shiro--range (window-start window) (window-end window t))))))
          (when (use-region-p)
            (setq context (plist-put context :selection
                                     (list :uri uri :range (shiro--range (region-beginning) (region-end))
                                           :text (let ((text (buffer-substring-no-properties (region-beginning) (region-end))))
                                                   (substring text 0 (min (length text) shiro--max-selection)))))))
          context)))))

;;; shiro/diagnostics from flymake ------------------------------------------------------------

(defun shiro--severity (type)
  (pcase (flymake--lookup-type-property type 'flymake-category)
    ('flymake-error 1) ('flymake-warning 2) (_ 3)))

(defun shiro--lsp-diagnostic (d)
  (list :range (shiro--range (flymake-diagnostic-beg d) (flymake-diagnostic-end d))
        :message (flymake-diagnostic-text d)
        :severity (shiro--severity (flymake-diagnostic-type d))
        :source (format "%s" (flymake-diagnostic-backend d))))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/diagnostics)) &key uris)
  (let* ((asked (and uris (append uris nil)))
         (entries (if asked
                      (mapcar (lambda (uri) (cons uri (find-buffer-visiting (eglot--uri-to-path uri)))) asked)
                    (mapcar (lambda (b) (cons (shiro--uri (buffer-file-name b)) b)) (shiro--file-buffers))))
         items)
    (dolist (entry entries)
      (let ((found (when (buffer-live-p (cdr entry))
                     (with-current-buffer (cdr entry)
                       (when (bound-and-true-p flymake-mode)
                         (mapcar #'shiro--lsp-diagnostic (seq-take (flymake-diagnostics) shiro--max-per-file)))))))
        (when (or found asked)
          (push (list :uri (car entry) :diagnostics (vconcat found)) items))))
    (list :items (vconcat (nreverse items)))))

;;; shiro/navigate from xref ------------------------------------------------------------------

(defun shiro--xref-location (item)
  (condition-case nil
      (let ((marker (xref-location-marker (xref-item-location item))))
        (with-current-buffer (marker-buffer marker)
          (when buffer-file-name
            (list :uri (shiro--uri buffer-file-name) :range (shiro--range marker marker)))))
    (error nil)))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/navigate)) &key kind uri position query)
  (if (equal kind "symbols")
      (let* ((buffer (or (car (shiro--file-buffers)) (current-buffer)))
             (items (with-current-buffer buffer (xref-backend-apropos (xref-find-backend) (or query "")))))
        (list :symbols (vconcat (delq nil (mapcar (lambda (item)
                                                    (when-let ((location (shiro--xref-location item)))
                                                      (list :name (xref-item-summary item) :kind 12 :location location)))
                                                  items)))))
    (with-current-buffer (find-file-noselect (eglot--uri-to-path uri))
      (save-excursion
        (goto-char (eglot--lsp-position-to-point position))
        (if (equal kind "hover")
            (list :hover (or (ignore-errors (thing-at-point 'symbol t)) ""))
          (let* ((backend (xref-find-backend))
                 (id (xref-backend-identifier-at-point backend))
                 (items (and id (if (equal kind "definition")
                                    (xref-backend-definitions backend id)
                                  (xref-backend-references backend id)))))
            (list :locations (vconcat (delq nil (mapcar #'shiro--xref-location items))))))))))

;;; Code actions: shiro/focusChat and the inline edit -----------------------------------------

(cl-defmethod eglot-handle-notification ((_s shiro-server) (_m (eql shiro/focusChat)) &key context action &allow-other-keys)
  ;; Out of the notification's handler: the inline edit waits for a whole turn.
  (run-at-time 0 nil (lambda ()
                       (if (equal action "edit")
                           (shiro-inline-edit context)
                         (setq shiro--pinned-context context)
                         (shiro-chat)))))

(defun shiro--inline-range (context)
  "The selection's range, or the cursor's whole line when nothing is selected."
  (let* ((range (plist-get (plist-get context :selection) :range))
         (start (plist-get range :start)) (end (plist-get range :end))
         (line (plist-get (or start (plist-get context :cursor) '(:line 0)) :line)))
    (if (and range (not (equal start end)))
        range
      (list :start (list :line line :character 0) :end (list :line (1+ line) :character 0)))))

(defun shiro-inline-edit (context &optional instruction)
  "Edit CONTEXT's selection in place with INSTRUCTION (asked for when nil), shown as a diff."
  (let* ((uri (or (plist-get (plist-get context :selection) :uri) (plist-get context :activeFile)))
         (range (shiro--inline-range context))
         (instruction (or instruction (funcall shiro-inline-edit-instruction-function)))
         (buffer (find-file-noselect (eglot--uri-to-path uri))))
    (unless (string-empty-p (string-trim instruction))
      (shiro--flush-changes)
      (let* ((result (jsonrpc-request (shiro-start) :workspace/executeCommand
                                      (list :command "shiro.inlineEdit"
                                            :arguments (vector (list :uri uri :range range :instruction instruction)))
                                      :timeout 600))
             (edits (cadr (plist-get (plist-get result :edit) :changes)))
             (proposed (generate-new-buffer "*shiro proposed*")))
        (if (not (and edits (> (length edits) 0)))
            (message "shiro: %s" (or (plist-get result :error) "no edit came back"))
          (with-current-buffer proposed
            (insert (with-current-buffer buffer (shiro--text)))
            (seq-doseq (edit (reverse (append edits nil)))
              (let* ((r (plist-get edit :range))
                     (beg (eglot--lsp-position-to-point (plist-get r :start)))
                     (end (eglot--lsp-position-to-point (plist-get r :end))))
                (delete-region beg end)
                (goto-char beg)
                (insert (plist-get edit :newText)))))
          (let ((diff (diff-no-select buffer proposed nil t (get-buffer-create "*shiro inline edit*"))))
            (display-buffer diff)
            (let ((accept (funcall shiro-inline-edit-confirm-function)))
              (let ((resolved (shiro--command "shiro.resolveInlineEdit"
                                              (list :turnId (plist-get result :turnId) :accept (if accept t :json-false)))))
                (setq shiro-inline-edit-last (list :accept accept :applied (eq (plist-get resolved :applied) t))))
              (quit-windows-on diff t))))
        (kill-buffer proposed)))))

(provide 'shiro-editor)
;;; shiro-editor.el ends here
