;;; shiro-editor.el --- editor context and intelligence for shiro.el  -*- lexical-binding: t; -*-

;;; Commentary:
;; Issue 38 (docs/editor-intelligence.md, docs/emacs.md):
;; - each prompt carries what the user sees (`shiro-editor-context'): the file buffer the user was
;;   in before the chat, its point, its active region with the text, the visible lines, the
;;   project's file buffers.  The chat's header line shows it ("Using app.py:40-52  [×]"); the [×]
;;   or C-c C-d (`shiro-drop-context') keeps it from the next prompt;
;; - `shiro/diagnostics' is answered from flymake (every backend the user runs, eglot's included);
;; - `shiro/navigate' from xref (the buffer's backend: eglot, etags, elisp...), hover from eglot;
;; - shiro's code actions: `shiro-ask-region', `shiro-fix-at-point', `shiro-explain-region' run
;;   `shiro.ask' on the server (the same command the code actions of `textDocument/codeAction'
;;   run, which eglot lists when shiro-lsp is a buffer's server); its `shiro/focusChat' opens the
;;   chat with that context, or for "Edit with shiro-neko…" reads an instruction;
;; - `shiro-edit-region' runs `shiro.inlineEdit' and shows the proposal as a diff buffer:
;;   C-c C-c accepts, C-c C-k rejects (`shiro.resolveInlineEdit').
;; `shiro-send-editor-context' nil stops sending the context.

;;; Code:

(require 'shiro)
(require 'flymake)
(require 'xref)
(require 'diff)

(defcustom shiro-send-editor-context t
  "Send the editor context (file, point, region, visible lines, open files) with each prompt."
  :type 'boolean :group 'shiro)

(defvar shiro-inline-edit-instruction-function
  (lambda () (read-string "Edit with shiro-neko: "))
  "Returns the instruction of an inline edit (read from the minibuffer).")

(defvar shiro--pinned-context nil "A code action's context, sent with the next prompt instead.")
(defvar shiro--drop-context nil "Non-nil: the next prompt goes without the editor context.")
(defvar shiro-inline-edit-last nil "The last inline edit's resolution: (:accept BOOL :applied BOOL).")
(defvar-local shiro--inline-turn nil "The turn id of the inline edit this diff buffer shows.")

;; The server caps again (server/agent/editor_context.py); these keep the request itself small.
(defconst shiro--max-open-files 30)
(defconst shiro--max-selection 20000)
(defconst shiro--max-per-file 200)

(defun shiro--file-buffers ()
  "The project's file buffers, most recently selected first: the first is the one the user
was in before going to the chat."
  (seq-filter (lambda (b)
                (let ((file (buffer-file-name b)))
                  (and file shiro--root (string-prefix-p shiro--root (expand-file-name file)))))
              (buffer-list)))

(defun shiro--range (beg end)
  (list :start (eglot--pos-to-lsp-position beg) :end (eglot--pos-to-lsp-position end)))

(defun shiro--in-project-p (file)
  (and file shiro--root (string-prefix-p shiro--root (expand-file-name file))))

(defun shiro--visit (uri)
  "The buffer of URI, a file of the project, visited if needed; nil for any other file.
File-local variables: only the safe ones (the file may come from anyone)."
  (let ((path (eglot--uri-to-path uri)))
    (when (shiro--in-project-p path)
      (or (find-buffer-visiting path)
          (and (file-regular-p path)
               (let ((enable-local-variables :safe)
                     ;; eglot's dispatcher let-binds this to the shiro server while a handler runs
                     ;; (eglot.el `eglot--connect'), and its find-file hook would then make the
                     ;; shiro server manage the new buffer: let it find the buffer's own server.
                     (eglot--cached-server nil))
                 (find-file-noselect path)))))))

(defun shiro--point-and-region (buffer)
  "BUFFER's point as the user sees it and its active region (BEG . END) or nil."
  (with-current-buffer buffer
    (let* ((window (get-buffer-window buffer))
           (point (if window (window-point window) (point)))
           (mark (and transient-mark-mode mark-active (mark t))))
      (list point (and mark (/= mark point) (cons (min mark point) (max mark point)))))))

(defun shiro--compute-context (&optional full)
  "What the user sees, as `shiro.chat''s context (a plist), or nil.  Without FULL only the file,
cursor and selection range (for the header line, which is redrawn often)."
  (when-let* ((buffer (car (shiro--file-buffers))))
    (with-current-buffer buffer
      (pcase-let* ((`(,point ,region) (shiro--point-and-region buffer))
                   (uri (shiro--uri buffer-file-name))
                   (context (list :activeFile uri :cursor (eglot--pos-to-lsp-position point))))
        (when region
          (setq context (plist-put context :selection
                                   (list :uri uri :range (shiro--range (car region) (cdr region))
                                         :text (and full (let ((text (buffer-substring-no-properties (car region) (cdr region))))
                                                           (substring text 0 (min (length text) shiro--max-selection))))))))
        (when full
          (when-let ((window (get-buffer-window buffer)))
            (setq context (plist-put context :visibleRange
                                     (list :uri uri :range (shiro--range (window-start window) (window-end window t))))))
          (setq context (plist-put context :openFiles
                                   (vconcat (mapcar (lambda (b) (shiro--uri (buffer-file-name b)))
                                                    (seq-take (shiro--file-buffers) shiro--max-open-files))))))
        context))))

(defun shiro--context-label (context)
  "\"app.py:40-52\" for CONTEXT: the selection's lines, else the cursor's line."
  (let* ((selection (plist-get context :selection))
         (uri (or (plist-get selection :uri) (plist-get context :activeFile)))
         (path (file-relative-name (eglot--uri-to-path uri) shiro--root))
         (range (plist-get selection :range))
         (first (1+ (plist-get (or (plist-get range :start) (plist-get context :cursor) '(:line 0)) :line)))
         (end (plist-get range :end))
         ;; A selection ending at column 0 does not take that line.
         (last (if end (max first (+ (plist-get end :line) (if (eql (plist-get end :character) 0) 0 1))) first)))
    (if (= first last) (format "%s:%d" path first) (format "%s:%d-%d" path first last))))

(defun shiro--next-context (&optional full)
  "The context the next prompt takes (see `shiro--compute-context' for FULL), or nil."
  (cond (shiro--pinned-context shiro--pinned-context)
        ((or shiro--drop-context (not shiro-send-editor-context)) nil)
        (t (shiro--compute-context full))))

(defun shiro-editor-context ()
  "The context of the prompt being sent now (a plist), or nil; noted under the prompt in the
chat.  A pinned code-action context is used once; a drop (`shiro-drop-context') lasts one prompt."
  (let ((context (shiro--next-context t)))
    (setq shiro--pinned-context nil shiro--drop-context nil)
    (when context
      (shiro--insert (format "  using %s\n\n" (shiro--context-label context)) 'shiro-dim))
    context))

(defun shiro-drop-context ()
  "Send the next prompt without the editor context (the chat's header line shows it)."
  (interactive)
  (setq shiro--pinned-context nil shiro--drop-context t)
  (force-mode-line-update t)
  (message "shiro: the next prompt goes without the editor context"))

(defun shiro--chip ()
  "The chat's header line: what the next prompt takes, with a [×] that drops it."
  (if-let ((context (and (shiro--live-p) (shiro--next-context))))
      (concat " Using " (shiro--context-label context) "  "
              (propertize "[×]" 'mouse-face 'header-line-highlight 'help-echo "Drop it from the next prompt (C-c C-d)"
                          'keymap (let ((map (make-sparse-keymap)))
                                    (define-key map [header-line mouse-1] #'shiro-drop-context)
                                    map)))
    (if shiro--drop-context " No editor context with the next prompt" "")))

(define-key shiro-chat-mode-map (kbd "C-c C-d") #'shiro-drop-context)
(add-hook 'shiro-chat-mode-hook (lambda () (setq header-line-format '((:eval (shiro--chip))))))

;;; shiro/diagnostics from flymake ------------------------------------------------------------

(defun shiro--severity (type)
  (pcase (flymake--lookup-type-property type 'flymake-category)
    ('flymake-error 1) ('flymake-warning 2) (_ 3)))

(defun shiro--lsp-diagnostic (d)
  (list :range (shiro--range (flymake-diagnostic-beg d) (flymake-diagnostic-end d))
        :message (flymake-diagnostic-text d)
        :severity (shiro--severity (flymake-diagnostic-type d))
        :source (format "%s" (flymake-diagnostic-backend d))))

(defun shiro--buffer-diagnostics (buffer &optional beg end)
  "BUFFER's flymake diagnostics (between BEG and END when given) as LSP Diagnostics, capped."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (bound-and-true-p flymake-mode)
        (mapcar #'shiro--lsp-diagnostic (seq-take (flymake-diagnostics beg end) shiro--max-per-file))))))

(defvar-local shiro--generation 0
  "How many times a flymake backend reported for this buffer: `generation' in shiro/diagnostics.
With it the server knows the language server has looked at an edit, so an edit that changes no
diagnostic need not wait the whole `diagnosticsWaitMs' (docs/editor-intelligence.md).")

(defun shiro--count-report (&rest _)
  "Count a flymake report (run in the reported buffer, by flymake's report function)."
  (setq shiro--generation (1+ shiro--generation)))

;; Flymake has no public hook for a backend's report; its report function (every backend's,
;; eglot's included) ends in `flymake--handle-report' in the buffer (Emacs 26 to 30).
(with-eval-after-load 'flymake
  (when (fboundp 'flymake--handle-report)
    (advice-add 'flymake--handle-report :after #'shiro--count-report)))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/diagnostics)) &key uris)
  (let* ((asked (and uris (append uris nil)))
         (entries (if asked
                      (mapcar (lambda (uri) (cons uri (find-buffer-visiting (eglot--uri-to-path uri)))) asked)
                    (mapcar (lambda (b) (cons (shiro--uri (buffer-file-name b)) b)) (shiro--file-buffers))))
         items)
    (dolist (entry entries)
      (let ((found (shiro--buffer-diagnostics (cdr entry))))
        (when (or found asked)
          (push (list :uri (car entry) :diagnostics (vconcat found)
                      :generation (if (buffer-live-p (cdr entry)) (buffer-local-value 'shiro--generation (cdr entry)) 0))
                items))))
    (list :items (vconcat (nreverse items)))))

;;; shiro/navigate from xref ------------------------------------------------------------------

(defun shiro--xref-location (item)
  (condition-case nil
      (let ((marker (xref-location-marker (xref-item-location item))))
        (with-current-buffer (marker-buffer marker)
          (when buffer-file-name
            (list :uri (shiro--uri buffer-file-name) :range (shiro--range marker marker)))))
    (error nil)))

(defun shiro--xref-backend ()
  "The buffer's xref backend, or nil when it is etags without a tags table: etags would ask
for one in the minibuffer in the middle of the server's request."
  (let ((backend (xref-find-backend)))
    (unless (and (eq backend 'etags)
                 (not (or (bound-and-true-p tags-file-name) (bound-and-true-p tags-table-list))))
      backend)))

(defun shiro--hover ()
  "The hover text at point from the buffer's eglot server, or \"\" (no language server)."
  (or (ignore-errors
        (when (eglot-managed-p)
          (let ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                                        (eglot--TextDocumentPositionParams) :timeout 4)))
            (and hover (eglot--hover-info (plist-get hover :contents))))))
      ""))

(defun shiro--navigate-at (kind buffer position)
  (with-current-buffer buffer
    (save-excursion
      (goto-char (eglot--lsp-position-to-point position))
      (if (equal kind "hover")
          (list :hover (shiro--hover))
        (let* ((backend (shiro--xref-backend))
               (id (and backend (xref-backend-identifier-at-point backend)))
               (items (and id (if (equal kind "definition")
                                  (xref-backend-definitions backend id)
                                (xref-backend-references backend id)))))
          (list :locations (vconcat (delq nil (mapcar #'shiro--xref-location items)))))))))

(cl-defmethod eglot-handle-request ((_s shiro-server) (_m (eql shiro/navigate)) &key kind uri position query)
  (shiro--navigate kind uri position query))

(defun shiro--navigate (kind uri position query)
  "`shiro/navigate''s answer: KIND at URI's POSITION, or the symbols matching QUERY."
  (if (equal kind "symbols")
      (let* ((buffer (or (car (shiro--file-buffers)) (current-buffer)))
             (items (with-current-buffer buffer
                      (when-let ((backend (shiro--xref-backend))) (xref-backend-apropos backend (or query ""))))))
        (list :symbols (vconcat (delq nil (mapcar (lambda (item)
                                                    (when-let ((location (shiro--xref-location item)))
                                                      (list :name (xref-item-summary item) :kind 12 :location location)))
                                                  items)))))
    (let* ((opened (and uri (not (find-buffer-visiting (eglot--uri-to-path uri)))))
           (buffer (and uri (shiro--visit uri))))
      (unwind-protect
          (if buffer (shiro--navigate-at kind buffer position) (list :locations []))
        ;; A buffer opened only to answer goes again (its locations are plain positions now).
        (when (and opened (buffer-live-p buffer) (not (buffer-modified-p buffer)))
          (kill-buffer buffer))))))

;;; Code actions: shiro.ask, shiro/focusChat -------------------------------------------------

(defun shiro--action-range ()
  "The active region, else the line of point: (BEG . END)."
  (if (use-region-p)
      (cons (region-beginning) (region-end))
    (cons (line-beginning-position) (line-end-position))))

(defun shiro--ask (action)
  "Run `shiro.ask' ACTION (\"ask\", \"fix\", \"explain\") on the region or the line of point."
  (unless (shiro--in-project-p buffer-file-name)
    (user-error "shiro: %s is not a file of the project" (or buffer-file-name (buffer-name))))
  (shiro-start)
  (shiro--track-buffer)
  (let* ((range (shiro--action-range))
         (uri (shiro--uri buffer-file-name))
         (diagnostics (and (equal action "fix")
                           (shiro--buffer-diagnostics (current-buffer) (car range) (max (cdr range) (1+ (car range))))))
         (args (append (list :uri uri :range (shiro--range (car range) (cdr range)) :action action)
                       (when diagnostics (list :diagnostics (vconcat diagnostics)))))
         (label (shiro--context-label (list :selection (list :uri uri :range (plist-get args :range))))))
    (deactivate-mark)
    (let ((result (shiro--command "shiro.ask" args)))
      (when-let ((turn (plist-get result :turnId)))
        ;; fix and explain start a turn on the server: show it in the chat.
        (push turn shiro--running)
        (shiro--insert (format "\n› %s with shiro-neko: %s%s\n\n" (capitalize action) label
                               (if diagnostics (format " (%d problem%s)" (length diagnostics)
                                                       (if (= (length diagnostics) 1) "" "s"))
                                 ""))
                       'shiro-prompt)
        (pop-to-buffer (shiro--chat-buffer)))
      result)))

(defun shiro-ask-region ()
  "Ask shiro-neko about the region (or the line of point): the chat opens with it as context."
  (interactive)
  (shiro--ask "ask"))

(defun shiro-fix-at-point ()
  "Fix with shiro-neko the flymake problems of the region or the line of point (they go with it)."
  (interactive)
  (shiro--ask "fix"))

(defun shiro-explain-region ()
  "Explain with shiro-neko the region (or the line of point)."
  (interactive)
  (shiro--ask "explain"))

(cl-defmethod eglot-handle-notification ((_s shiro-server) (_m (eql shiro/focusChat)) &key context action &allow-other-keys)
  ;; Out of the notification's handler: the chat and the minibuffer wait for the user.
  (run-at-time 0 nil (lambda ()
                       (if (equal action "edit")
                           (shiro-inline-edit context)
                         (setq shiro--pinned-context context shiro--drop-context nil)
                         (shiro-chat)))))

;;; The inline edit: shiro.inlineEdit, a diff buffer, shiro.resolveInlineEdit ----------------

(defvar shiro-inline-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'shiro-inline-edit-accept)
    (define-key map (kbd "C-c C-k") #'shiro-inline-edit-reject)
    map))

(define-minor-mode shiro-inline-edit-mode
  "shiro-neko's proposed edit, as a diff: C-c C-c applies it, C-c C-k drops it."
  :lighter " shiro-edit"
  (setq header-line-format (and shiro-inline-edit-mode
                                " shiro-neko's edit: C-c C-c accept · C-c C-k reject")))

(defun shiro--inline-range (context)
  "CONTEXT's selection, or the cursor's whole line when nothing is selected."
  (let* ((range (plist-get (plist-get context :selection) :range))
         (start (plist-get range :start)) (end (plist-get range :end))
         (line (plist-get (or start (plist-get context :cursor) '(:line 0)) :line)))
    (if (and range (not (equal start end)))
        range
      (list :start (list :line line :character 0) :end (list :line (1+ line) :character 0)))))

(defun shiro-edit-region (instruction)
  "Edit the region (or the line of point) with INSTRUCTION; the proposal shows as a diff."
  (interactive (list (funcall shiro-inline-edit-instruction-function)))
  (unless (shiro--in-project-p buffer-file-name)
    (user-error "shiro: %s is not a file of the project" (or buffer-file-name (buffer-name))))
  (shiro-start)
  (shiro--track-buffer)
  (let* ((range (shiro--action-range))
         (uri (shiro--uri buffer-file-name)))
    (deactivate-mark)
    (shiro-inline-edit (list :activeFile uri :selection (list :uri uri :range (shiro--range (car range) (cdr range))))
                       instruction)))

(defun shiro-inline-edit (context &optional instruction)
  "Edit CONTEXT's selection in place with INSTRUCTION (asked for when nil).  The turn runs
without blocking Emacs; its proposal then shows in *shiro inline edit*."
  (let* ((uri (or (plist-get (plist-get context :selection) :uri) (plist-get context :activeFile)))
         (range (shiro--inline-range context))
         (instruction (or instruction (funcall shiro-inline-edit-instruction-function)))
         (buffer (shiro--visit uri)))
    (cond ((not buffer) (message "shiro: %s is not a file of the project" uri))
          ((string-empty-p (string-trim instruction)) (message "shiro: no instruction, no edit"))
          (t
           (shiro--flush-changes)
           (let ((label (shiro--context-label (list :selection (list :uri uri :range range)))))
             ;; The turn streams into the chat like any other: say what it is.
             (shiro--insert (format "\n› Edit %s with shiro-neko: %s\n\n" label instruction) 'shiro-prompt)
             (message "shiro: editing %s…" label))
           (jsonrpc-async-request
            (shiro-start) :workspace/executeCommand
            (list :command "shiro.inlineEdit"
                  :arguments (vector (list :uri uri :range range :instruction instruction)))
            :success-fn (lambda (result) (shiro--show-inline-edit buffer result))
            :error-fn (lambda (err) (message "shiro: the inline edit failed: %s" (plist-get err :message)))
            :timeout 600)))))

(defun shiro--unified-diff (path old new)
  "A unified diff of the texts OLD and NEW of PATH (shown as a/PATH and b/PATH)."
  (let ((a (make-temp-file "shiro-old")) (b (make-temp-file "shiro-new"))
        (coding-system-for-write 'utf-8-unix) (coding-system-for-read 'utf-8-unix))
    (unwind-protect
        (progn
          (with-temp-file a (insert old))
          (with-temp-file b (insert new))
          (with-temp-buffer
            (call-process diff-command nil t nil "-u" "--label" (concat "a/" path) "--label" (concat "b/" path) a b)
            (buffer-string)))
      (delete-file a)
      (delete-file b))))

(defun shiro--show-inline-edit (buffer result)
  "Show RESULT's proposed change of BUFFER as a diff to accept or reject."
  (let ((edits (cadr (plist-get (plist-get result :edit) :changes))))
    (if (not (and edits (> (length edits) 0) (buffer-live-p buffer)))
        (progn (setq shiro-inline-edit-last (list :accept nil :applied nil :error (plist-get result :error)))
               (message "shiro: %s" (or (plist-get result :error) "no edit came back")))
      (let* ((old (with-current-buffer buffer (shiro--text)))
             (new (with-temp-buffer
                    (insert old)
                    ;; Last edit first: the earlier ranges keep their positions.
                    (seq-doseq (edit (reverse (append edits nil)))
                      (let* ((r (plist-get edit :range))
                             (beg (eglot--lsp-position-to-point (plist-get r :start)))
                             (end (eglot--lsp-position-to-point (plist-get r :end))))
                        (delete-region beg end)
                        (goto-char beg)
                        (insert (plist-get edit :newText))))
                    (buffer-string)))
             (path (file-relative-name (buffer-file-name buffer) shiro--root))
             (diff (get-buffer-create "*shiro inline edit*")))
        (with-current-buffer diff
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert (shiro--unified-diff path old new)))
          (diff-mode)
          (setq buffer-read-only t)
          (goto-char (point-min))
          (shiro-inline-edit-mode 1)
          (setq shiro--inline-turn (plist-get result :turnId)))
        (pop-to-buffer diff)
        (message "shiro: C-c C-c applies the edit, C-c C-k drops it")))))

(defun shiro--resolve-inline-edit (accept)
  (let ((turn shiro--inline-turn))
    (unless turn (user-error "shiro: no inline edit in this buffer"))
    (let ((resolved (shiro--command "shiro.resolveInlineEdit" (list :turnId turn :accept (if accept t :json-false)))))
      (setq shiro-inline-edit-last (list :accept accept :applied (eq (plist-get resolved :applied) t)))
      (let ((diff (current-buffer)))
        (quit-windows-on diff)
        (kill-buffer diff))
      (message "shiro: the edit is %s" (cond ((not accept) "dropped")
                                             ((plist-get shiro-inline-edit-last :applied) "applied (undo takes it back)")
                                             (t "not applied: the file changed meanwhile?"))))))

(defun shiro-inline-edit-accept ()
  "Apply the edit this diff shows (`shiro.resolveInlineEdit', through workspace/applyEdit)."
  (interactive)
  (shiro--resolve-inline-edit t))

(defun shiro-inline-edit-reject ()
  "Drop the edit this diff shows."
  (interactive)
  (shiro--resolve-inline-edit nil))

(provide 'shiro-editor)
;;; shiro-editor.el ends here
